//! The identity layer in front of every protected API route: it resolves the
//! caller once and hands it to handlers as the [`Caller`] extractor.

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::response::IntoResponse;

use super::error::Error;
use crate::auth::Caller;
use crate::auth::identify::identify;
use crate::state::AppState;

/// The layer: rejects a request without a valid identity (auth on) with
/// 401 and records the caller for the handler.
pub fn layer(
    state: AppState,
) -> super::gate::Gate<
    super::gate::AsyncCheck<
        impl Fn(Request) -> super::gate::Checking + Clone + Send + Sync + 'static,
    >,
> {
    super::gate::Gate(super::gate::AsyncCheck(move |mut request: Request| {
        let state = state.clone();
        // Boxed by the gate: the lookup is done before the route runs,
        // while the route's future lives as long as the request (a long
        // poll's 120 s included).
        let checking: super::gate::Checking = Box::pin(async move {
            match identify(state.db(), request.headers(), state.config.auth).await {
                Ok(Some(caller)) => {
                    request.extensions_mut().insert(caller);
                    Ok(request)
                }
                Ok(None) => Err(Error::Unauthorized.into_response()),
                Err(error) => Err(Error::from(error).into_response()),
            }
        });
        checking
    }))
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
