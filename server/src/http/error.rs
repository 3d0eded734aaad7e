//! The one error type of the HTTP API and how it is answered: a status code
//! and `{"error": "<message>"}`. Internal errors are logged and answered with
//! a generic message, so no database or I/O detail ever reaches a client.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clarify_core::ErrorBody;

/// Everything a handler can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; the message names the field (400).
    #[error("{0}")]
    BadRequest(String),
    /// No such thing, or not the caller's to see: the two are answered the
    /// same (404, A3).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// No valid identity while auth is on (401, with `WWW-Authenticate`).
    #[error("authentication required")]
    Unauthorized,
    /// The caller is known but may not do this (403).
    #[error("{0}")]
    Forbidden(&'static str),
    /// The request conflicts with the resource's state (409).
    #[error("{0}")]
    Conflict(&'static str),
    /// A long wait ended without an answer (504, A5a).
    #[error("no answer yet; wait again")]
    WaitTimeout,
    /// The answer was recorded but could not be delivered, and was rolled
    /// back (R7a): the bundle is answerable again.
    #[error("the answer could not be delivered to the agent; the question is still open")]
    Undelivered,
    /// Any other status with its own message (e.g. a body rejection).
    #[error("{1}")]
    Status(StatusCode, String),
    /// A failure inside the server; logged, never shown (500).
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    /// The status code this error is answered with.
    #[must_use]
    pub fn status_code(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::WaitTimeout => StatusCode::GATEWAY_TIMEOUT,
            Self::Undelivered | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Status(status, _) => *status,
        }
    }

    /// An internal error, with its cause kept for the log.
    pub fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Internal(Box::new(error))
    }
}

impl From<crate::auth::AgentOnly> for Error {
    fn from(_: crate::auth::AgentOnly) -> Self {
        Self::Forbidden("agent tokens can only ask and wait")
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        // PostgreSQL refuses U+0000 in text (22021) and in JSON (22P05): a
        // request that smuggled one past the body check (in a path, or an
        // MCP argument) is the caller's mistake, not the server's.
        if let sqlx::Error::Database(db) = &error
            && matches!(db.code().as_deref(), Some("22021" | "22P05"))
        {
            return Self::BadRequest("text may not contain the NUL character (U+0000)".to_owned());
        }
        Self::internal(error)
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        if let Self::Internal(cause) = &self {
            tracing::error!(error = %cause, "internal error");
        }
        let body = ErrorBody {
            error: self.to_string(),
        };
        let mut response = (self.status_code(), Json(body)).into_response();
        if matches!(self, Self::Unauthorized) {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// What handlers return.
pub type Result<T, E = Error> = std::result::Result<T, E>;
