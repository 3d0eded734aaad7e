//! Sign-in through the team's OpenID provider (issue 49 item 3): `start`
//! sends the browser to the provider, `callback` takes it back, checks it
//! and gives it the same HttpOnly session cookie as a token login
//! ([`super::auth::begin_browser_session`]). What must come back (state,
//! nonce, PKCE verifier) travels sealed in a cookie of its own, short-lived
//! and spent by the callback whatever it decides (docs/DESIGN.md "Sign-in
//! with an identity provider").

use axum::extract::{Query, State};
use axum::http::header::{CACHE_CONTROL, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use subtle::ConstantTimeEq as _;

use super::auth::{begin_browser_session, secure_attribute};
use super::error::{Error, Result};
use crate::clock::now_micros;
use crate::db::oidc::user_for;
use crate::ids::new_id;
use crate::oidc::{PENDING_FOR, Pending, Refused};
use crate::state::AppState;

/// The cookie holding a started sign-in.
const PENDING_COOKIE: &str = "clarify_oidc";

/// Whom the pending sign-in is sealed for: nobody is known yet, so the
/// purpose alone, which keeps any other sealed value out.
const SEALED_FOR: &str = "oidc-pending";

/// Where the pending cookie is sent: the callback alone needs it.
const PENDING_PATH: &str = "/api/v1/auth/oidc";

const NOT_CONFIGURED: Error = Error::NotFound("sign-in with an identity provider");

/// What the provider sends the browser back with.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Callback {
    /// The authorization code.
    code: Option<String>,
    /// The state this server sent.
    state: Option<String>,
    /// The provider that answered (RFC 9207), when it says.
    iss: Option<String>,
    /// Why the provider did not sign the person in, instead of a code.
    error: Option<String>,
}

/// Sends the browser to the identity provider to sign in.
#[utoipa::path(
    get,
    path = "/auth/oidc/start",
    tag = "auth",
    security(()),
    responses(
        (status = 302, description = "To the provider's sign-in; a short-lived cookie holds what must come back",
            headers(("Location" = String, description = "The provider's authorization URL"),
                ("Set-Cookie" = String, description = "The pending sign-in, sealed, HttpOnly"))),
        (status = 404, description = "No identity provider is configured", body = clarify_core::ErrorBody),
        (status = 502, description = "The identity provider cannot be reached now", body = clarify_core::ErrorBody),
    )
)]
pub async fn start(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    let oidc = state.oidc.as_ref().ok_or(NOT_CONFIGURED)?;
    let (url, pending) = oidc.begin().await.map_err(refused)?;
    let sealed = state.seal_key.seal(SEALED_FOR, &pending, PENDING_FOR);
    let cookie = format!(
        "{PENDING_COOKIE}={sealed}; Path={PENDING_PATH}; HttpOnly; SameSite=Lax; Max-Age={}{}",
        PENDING_FOR.as_secs(),
        secure_attribute(&headers)
    );
    let mut response = StatusCode::FOUND.into_response();
    let answer = response.headers_mut();
    answer.insert(
        LOCATION,
        HeaderValue::from_str(&url).map_err(Error::internal)?,
    );
    answer.insert(
        SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(Error::internal)?,
    );
    answer.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Where the identity provider sends the browser back: signs it in.
#[utoipa::path(
    get,
    path = "/auth/oidc/callback",
    tag = "auth",
    security(()),
    params(Callback),
    responses(
        (status = 303, description = "Signed in: to the inbox, with the session cookie",
            headers(("Location" = String, description = "The inbox"),
                ("Set-Cookie" = String, description = "The HttpOnly session cookie; the pending sign-in cleared"))),
        (status = 400, description = "Refused: the message names what failed (state, code, id_token); no session is set",
            body = clarify_core::ErrorBody),
        (status = 404, description = "No identity provider is configured", body = clarify_core::ErrorBody),
        (status = 429, description = "Too many sign-ins waiting on the identity provider at once", body = clarify_core::ErrorBody),
        (status = 502, description = "The identity provider cannot be reached now", body = clarify_core::ErrorBody),
    )
)]
pub async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(back): Query<Callback>,
) -> Result<Response> {
    state.oidc.as_ref().ok_or(NOT_CONFIGURED)?;
    // Spent whatever happens: a pending sign-in is good for one way back.
    let clear = format!(
        "{PENDING_COOKIE}=; Path={PENDING_PATH}; HttpOnly; SameSite=Lax; Max-Age=0{}",
        secure_attribute(&headers)
    );
    let clear = HeaderValue::from_str(&clear).map_err(Error::internal)?;
    let mut response = match sign_in(&state, &headers, &back).await {
        Ok(session) => {
            let mut response = StatusCode::SEE_OTHER.into_response();
            let answer = response.headers_mut();
            answer.insert(LOCATION, HeaderValue::from_static("/"));
            answer.append(SET_COOKIE, session);
            response
        }
        Err(error) => error.into_response(),
    };
    response.headers_mut().append(SET_COOKIE, clear);
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Checks the way back and starts the session: its `Set-Cookie`.
async fn sign_in(state: &AppState, headers: &HeaderMap, back: &Callback) -> Result<HeaderValue> {
    let oidc = state.oidc.as_ref().ok_or(NOT_CONFIGURED)?;
    if back.error.is_some() {
        return Err(refused(Refused::Denied));
    }
    let pending: Pending = pending_cookie(headers)
        .and_then(|sealed| state.seal_key.open(SEALED_FOR, sealed).ok())
        .ok_or(refused(Refused::NoPending))?;
    let sent = back.state.as_deref().unwrap_or_default();
    if !bool::from(sent.as_bytes().ct_eq(pending.state.as_bytes())) {
        return Err(refused(Refused::State));
    }
    if back.iss.as_deref().is_some_and(|iss| iss != oidc.issuer()) {
        return Err(refused(Refused::Issuer));
    }
    let code = back.code.as_deref().ok_or(refused(Refused::NoCode))?;
    let identity = oidc.finish(code, &pending).await.map_err(refused)?;
    let now = now_micros();
    let id = new_id();
    let name = user_name(&identity.name, &identity.subject);
    let user = state
        .db()
        .write(async |c| user_for(c, &identity.issuer, &identity.subject, &name, &id, now).await)
        .await?;
    begin_browser_session(state, headers, &user.id, None).await
}

/// A name for a new user from what the provider calls them: trimmed, at
/// most 64 characters, `sub` when empty.
fn user_name(name: &str, subject: &str) -> String {
    let name: String = name
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(64)
        .collect();
    if name.is_empty() {
        subject.chars().take(64).collect()
    } else {
        name
    }
}

/// The sealed pending sign-in a request carries, if any.
fn pending_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == PENDING_COOKIE)
        .map(|(_, value)| value)
}

/// A refusal as the HTTP error that says it: 502 when the provider is
/// away, else 400 naming what failed.
fn refused(refusal: Refused) -> Error {
    if refusal == Refused::Busy {
        Error::TooMany(refusal.to_string())
    } else if refusal.is_unreachable() {
        Error::BadGateway("the identity provider cannot be reached now; try again later")
    } else {
        Error::BadRequest(refusal.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::user_name;

    #[test]
    fn a_new_users_name_is_the_providers_trimmed_and_bounded_else_sub() {
        assert_eq!(user_name("  ada ", "s1"), "ada");
        assert_eq!(user_name("a\u{7}d\na", "s1"), "ada");
        assert_eq!(user_name(&"x".repeat(100), "s1").chars().count(), 64);
        assert_eq!(user_name(" \t", "s1"), "s1");
    }
}
