//! Browser login with a personal access token, logout, and "who am I".

use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use clarify_core::api;

use super::error::{Error, Result};
use super::json::Json;
use crate::auth::identify::{COOKIE_NAME, identify, session_cookie};
use crate::clock::now_micros;
use crate::db::users;
use crate::ids::{hash_secret, new_id, new_secret};
use crate::state::AppState;

/// How long a browser stays logged in.
const BROWSER_SESSION_SECS: i64 = 30 * 86_400;

/// Browser logins one user keeps at once; a login beyond logs the oldest
/// out (issue 26).
pub const LOGINS_PER_USER: i64 = 32;

/// Exchanges a personal access token for an HttpOnly session cookie.
#[utoipa::path(
    post,
    path = "/auth/login",
    tag = "auth",
    request_body = api::Login,
    security(()),
    responses(
        (status = 200, description = "Logged in; the session cookie is set", body = api::LoggedIn,
            headers(("Set-Cookie" = String, description = "The HttpOnly session cookie"))),
    )
)]
pub async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(body): Json<api::Login>,
) -> Result<Response> {
    let now = now_micros();
    let token = body.token.trim();
    // Said apart (issue 29): something pasted that is no token at all, and
    // a token this server does not know (any longer). The prefix is no
    // secret: every token shows it.
    if !token.starts_with(crate::auth::tokens::PAT_PREFIX) {
        return Err(Error::BadCredentials(
            "token: that is not an access token (they start with clk_pat_; \
             `clarify token create --user NAME` makes one)",
        ));
    }
    let found = users::by_token_hash(state.db().pool(), &hash_secret(token), now).await?;
    let Some(users::ValidToken { user, token_id, .. }) = found else {
        return Err(Error::BadCredentials(
            "token: unknown, revoked or expired (`clarify token create --user NAME` makes a new one)",
        ));
    };
    let cookie = begin_browser_session(&state, &headers, &user.id, Some(&token_id)).await?;
    let mut response = axum::Json(api::LoggedIn { user: user.into() }).into_response();
    response.headers_mut().insert(SET_COOKIE, cookie);
    Ok(response)
}

/// Starts a browser session for `user_id` and returns the `Set-Cookie`
/// that hands it to the browser: the one way a browser signs in, with a
/// personal access token (`token_id`, whose revocation ends the session) or
/// through the OpenID provider (none; issue 49 item 3).
///
/// # Errors
/// Database errors.
pub(super) async fn begin_browser_session(
    state: &AppState,
    headers: &HeaderMap,
    user_id: &str,
    token_id: Option<&str>,
) -> Result<HeaderValue> {
    let now = now_micros();
    let secret = new_secret(crate::auth::identify::WEB_PREFIX);
    let expires_at = now + BROWSER_SESSION_SECS * 1_000_000;
    let mut tx = state.db().begin_write().await?;
    users::insert_browser_session(
        &mut tx,
        &new_id(),
        user_id,
        token_id,
        &hash_secret(&secret),
        now,
        expires_at,
    )
    .await?;
    users::trim_browser_sessions(&mut tx, user_id, now, LOGINS_PER_USER).await?;
    tx.commit().await?;
    let cookie = format!(
        "{COOKIE_NAME}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age={BROWSER_SESSION_SECS}{}",
        secure_attribute(headers)
    );
    HeaderValue::from_str(&cookie).map_err(Error::internal)
}

/// Ends the browser session and clears its cookie.
#[utoipa::path(
    post,
    path = "/auth/logout",
    tag = "auth",
    security(()),
    responses(
        (status = 200, description = "Logged out; the session cookie is cleared", body = api::Acknowledged,
            headers(("Set-Cookie" = String, description = "Clears the session cookie"))),
    )
)]
pub async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    if let Some(secret) = session_cookie(&headers) {
        let hash = hash_secret(secret);
        state
            .db()
            .write(async |c| users::delete_browser_session(c, &hash).await)
            .await?;
    }
    let done = api::Acknowledged {
        success: true,
        ..api::Acknowledged::default()
    };
    let mut response = axum::Json(done).into_response();
    let clear = format!(
        "{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}",
        secure_attribute(&headers)
    );
    response.headers_mut().insert(
        SET_COOKIE,
        HeaderValue::from_str(&clear).map_err(Error::internal)?,
    );
    Ok(response)
}

/// `; Secure` when the browser reached us over https: directly, or through a
/// proxy that says so (`X-Forwarded-Proto`, `Forwarded: proto=https`), or
/// from an https page. Trusting a client that claims https costs nothing:
/// the cookie only becomes stricter for that one client.
pub(super) fn secure_attribute(headers: &HeaderMap) -> &'static str {
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    let forwarded_proto = value("x-forwarded-proto");
    let https = forwarded_proto.split(',').next().unwrap_or_default().trim() == "https"
        || value("forwarded")
            .split([';', ','])
            .any(|pair| pair.trim() == "proto=https")
        || value("origin").starts_with("https://");
    if https { "; Secure" } else { "" }
}

/// Whether auth is on and who the caller is (`null` when unknown); open to
/// everyone so the web app can decide to show the login page.
#[utoipa::path(
    get,
    path = "/auth/me",
    tag = "auth",
    security(()),
    responses(
        (status = 200, description = "Whether auth is on, and who you are", body = api::Me),
    )
)]
pub async fn me(State(state): State<AppState>, headers: HeaderMap) -> Result<impl IntoResponse> {
    let caller = identify(state.db(), &headers, state.config.auth).await?;
    let user = match caller {
        Some(crate::auth::Caller::User(id)) => users::by_id(state.db().pool(), &id).await?,
        _ => None,
    };
    Ok(axum::Json(api::Me {
        auth_enabled: state.config.auth,
        user: user.map(Into::into),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secure(pairs: &[(&'static str, &str)]) -> &'static str {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, value.parse().unwrap());
        }
        secure_attribute(&headers)
    }

    #[test]
    fn the_cookie_is_secure_exactly_when_the_browser_came_over_https() {
        assert_eq!(secure(&[]), "");
        assert_eq!(secure(&[("x-forwarded-proto", "http")]), "");
        assert_eq!(secure(&[("x-forwarded-proto", "HTTPS")]), "; Secure");
        assert_eq!(secure(&[("x-forwarded-proto", "https, http")]), "; Secure");
        assert_eq!(
            secure(&[("forwarded", "for=1.2.3.4;proto=https")]),
            "; Secure"
        );
        assert_eq!(
            secure(&[("origin", "https://clarify.example.com")]),
            "; Secure"
        );
        assert_eq!(secure(&[("origin", "http://127.0.0.1:7420")]), "");
    }
}
