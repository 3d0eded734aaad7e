//! The one error type of the HTTP API and how it is answered: a status code
//! and `{"error": "<message>"}`. Internal errors are logged and answered with
//! a generic message, so no database or I/O detail ever reaches a client.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use clarify_core::ErrorBody;

use crate::lifecycle as domain;

/// Everything a handler can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// A credential that proves nothing; the message names it (401, with
    /// `WWW-Authenticate`).
    #[error("{0}")]
    BadCredentials(&'static str),
    /// The caller is known but may not do this (403).
    #[error("{0}")]
    Forbidden(&'static str),
    /// The request conflicts with the resource's state (409).
    #[error("{0}")]
    Conflict(&'static str),
    /// The body does not say it is JSON (415).
    #[error("invalid request body: expected Content-Type: application/json")]
    UnsupportedMediaType,
    /// The body is larger than any request needs (413).
    #[error("request body too large")]
    PayloadTooLarge,
    /// The body did not arrive within the body deadline (408,
    /// `crate::serve::body`).
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// JSON of the wrong shape; the message names the field (422).
    #[error("{0}")]
    Unprocessable(String),
    /// The caller holds as many of something as it may (429).
    #[error("{0}")]
    TooMany(String),
    /// The caller asks faster than it may (429, `Retry-After` the seconds
    /// given).
    #[error("{0}")]
    TooFast(String, u64),
    /// A long wait ended without an answer (504, A5a).
    #[error("no answer yet; wait again")]
    WaitTimeout,
    /// The server is shutting down; the client should try again (503).
    #[error("the server is shutting down; wait again")]
    ShuttingDown,
    /// The answer was recorded but could not be delivered, and was rolled
    /// back (R7a): the bundle is answerable again.
    #[error("the answer could not be delivered to the agent; the question is still open")]
    Undelivered,
    /// A server this one relies on (the OpenID provider) cannot be reached
    /// now (502); the message says which, never why in detail.
    #[error("{0}")]
    BadGateway(&'static str),
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
            Self::Unauthorized | Self::BadCredentials(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::TooMany(_) | Self::TooFast(..) => StatusCode::TOO_MANY_REQUESTS,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::WaitTimeout => StatusCode::GATEWAY_TIMEOUT,
            Self::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            Self::BadGateway(_) => StatusCode::BAD_GATEWAY,
            Self::Undelivered | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// An internal error, with its cause kept for the log.
    pub fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Internal(Box::new(error))
    }
}

impl From<crate::auth::AgentOnly> for Error {
    fn from(only: crate::auth::AgentOnly) -> Self {
        domain::Error::from(only).into()
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        domain::Error::from(error).into()
    }
}

impl From<domain::Error> for Error {
    fn from(error: domain::Error) -> Self {
        match error {
            domain::Error::Invalid(message) => Self::BadRequest(message),
            domain::Error::NotFound(what) => Self::NotFound(what),
            domain::Error::Forbidden(why) => Self::Forbidden(why),
            domain::Error::Conflict(why) => Self::Conflict(why),
            domain::Error::Undelivered => Self::Undelivered,
            domain::Error::TooMany(why) => Self::TooMany(why),
            error @ domain::Error::TooFast { retry_after, .. } => {
                Self::TooFast(error.to_string(), retry_after.as_secs().max(1))
            }
            domain::Error::Database(cause) => Self::internal(cause),
        }
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
        if matches!(self, Self::TooMany(_)) {
            // A place may come free: say when to look again.
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("30"),
            );
        }
        if let Self::TooFast(_, seconds) = &self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(*seconds),
            );
        }
        if matches!(self, Self::Unauthorized | Self::BadCredentials(_)) {
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
