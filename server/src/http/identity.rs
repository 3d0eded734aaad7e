//! The identity layer in front of every protected API route: it resolves the
//! caller once and hands it to handlers as the [`Caller`] extractor.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::Error;
use crate::auth::Caller;
use crate::auth::identify::identify;
use crate::state::AppState;

/// Rejects a request without a valid identity (auth on) with 401 and
/// records the caller for the handler.
pub async fn require_identity(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Boxed: the lookup's future is large and done before `next` runs, while
    // this one lives as long as the request (a long poll's 120 s included).
    match Box::pin(identify(state.db(), request.headers(), state.config.auth)).await {
        Ok(Some(caller)) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Ok(None) => Error::Unauthorized.into_response(),
        Err(error) => Error::from(error).into_response(),
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        // Absent only on a route outside the identity layer: refuse rather
        // than default to the all-seeing unscoped caller.
        parts
            .extensions
            .get::<Self>()
            .cloned()
            .ok_or(Error::Unauthorized)
    }
}
