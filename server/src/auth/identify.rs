//! Reading the caller's identity off a request: `Authorization: Bearer`
//! (personal access token or agent token) or the browser session cookie.

use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, COOKIE};

use super::tokens::PAT_PREFIX;
use clarify_core::{SessionId, UserId};

use super::{Agent, Caller};
use crate::clock::now_micros;
use crate::db::{Db, sessions, users};
use crate::ids::hash_secret;

/// The browser session cookie.
pub const COOKIE_NAME: &str = "clarify_session";

/// The prefix of agent tokens.
pub const AGENT_PREFIX: &str = "clk_agent_";

/// The prefix of browser session secrets (the login cookie's value).
pub const WEB_PREFIX: &str = "clk_web_";

/// The bearer token of a request, if any.
#[must_use]
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The browser session secret of a request, if any.
#[must_use]
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
}

/// The session whose agent token the request carries (`Authorization:
/// Bearer clk_agent_…`), if any: the one lookup of agent tokens, made by
/// [`identify`] alone.
async fn agent_session(db: &Db, headers: &HeaderMap) -> sqlx::Result<Option<sessions::Session>> {
    match bearer(headers).filter(|token| token.starts_with(AGENT_PREFIX)) {
        Some(token) => sessions::by_agent_token_hash(db.pool(), &hash_secret(token)).await,
        None => Ok(None),
    }
}

/// Who the request is from, resolved once for the whole request: an agent
/// token makes [`Caller::Agent`] with auth on or off (scoped only under
/// auth); with auth off anything else is [`Caller::Unscoped`] (A4: an
/// unknown token is no reason to deny); with auth on, `None` when the
/// request proves no identity.
///
/// # Errors
/// Database errors.
pub async fn identify(db: &Db, headers: &HeaderMap, auth: bool) -> sqlx::Result<Option<Caller>> {
    if let Some(session) = agent_session(db, headers).await? {
        return Ok(Some(Caller::Agent(Agent {
            session_id: SessionId::from(session.id),
            creator: Some(session.created_by)
                .filter(|id| !id.is_empty())
                .map(UserId::from),
            scoped: auth,
        })));
    }
    if !auth {
        return Ok(Some(Caller::Unscoped));
    }
    let now = now_micros();
    if let Some(token) = bearer(headers) {
        if token.starts_with(PAT_PREFIX) {
            let Some(valid) = users::by_token_hash(db.pool(), &hash_secret(token), now).await?
            else {
                return Ok(None);
            };
            if valid.stale {
                db.write(async |c| users::touch_token(c, &valid.token_id, now).await)
                    .await?;
            }
            return Ok(Some(Caller::User(valid.user.id.into())));
        }
        return Ok(None);
    }
    if let Some(secret) = session_cookie(headers) {
        let user = users::by_browser_secret(db.pool(), &hash_secret(secret), now).await?;
        return Ok(user.map(|u| Caller::User(u.id.into())));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_others_are_not_bearers() {
        assert_eq!(
            bearer(&headers(&[("authorization", "Bearer clk_pat_x")])),
            Some("clk_pat_x")
        );
        assert_eq!(
            bearer(&headers(&[("authorization", "bearer  clk_pat_x ")])),
            Some("clk_pat_x")
        );
        assert_eq!(
            bearer(&headers(&[("authorization", "Basic dXNlcg==")])),
            None
        );
        assert_eq!(bearer(&headers(&[("authorization", "Bearer")])), None);
        assert_eq!(bearer(&headers(&[])), None);
    }

    #[test]
    fn the_session_cookie_is_found_among_others_and_headers() {
        let many = headers(&[
            ("cookie", "theme=dark; clarify_session=clk_web_1"),
            ("cookie", "other=2"),
        ]);
        assert_eq!(session_cookie(&many), Some("clk_web_1"));
        let lookalike = headers(&[("cookie", "xclarify_session=no; clarify_sessions=no")]);
        assert_eq!(session_cookie(&lookalike), None);
    }
}
