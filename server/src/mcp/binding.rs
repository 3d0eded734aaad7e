//! MCP sessions belong to the identity that opened them: a request naming a
//! session (`Mcp-Session-Id`) is served only for that same identity, so a
//! session id that leaks (a log, a proxy) is useless under another token.
//! Any other caller is told the session does not exist, which MCP clients
//! answer by initializing a session of their own.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};

use crate::AppState;
use crate::auth::Caller;
use crate::clock::{micros, now_micros};
use crate::db::mcp_owners;
use crate::http::error::Error;
use crate::ids::hash_secret;

/// The header naming a streamable-HTTP MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How long a session's owner is remembered (as long as replicas keep
/// sessions themselves).
const KEEP: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// The identity a session is bound to.
fn owner(caller: &Caller) -> String {
    match caller {
        Caller::Unscoped => "unscoped".to_owned(),
        Caller::User(id) => format!("user:{id}"),
        Caller::Agent { session_id } => format!("agent:{session_id}"),
    }
}

/// The middleware, inside the identity layer of one `surface` (`mcp` or
/// `agent`: the same id on the other surface is another session).
pub async fn bind(
    State((state, surface)): State<(AppState, &'static str)>,
    request: Request,
    next: Next,
) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return Error::Unauthorized.into_response();
    };
    let owner = owner(&caller);
    let key = |session: &str| hash_secret(&format!("{surface}\n{session}"));
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(key);
    if let Some(hash) = &named {
        match mcp_owners::owner(state.db().pool(), hash).await {
            Ok(Some(recorded)) if recorded == owner => {}
            Ok(_) => return Error::NotFound("MCP session").into_response(),
            Err(error) => return Error::from(error).into_response(),
        }
    }
    let response = next.run(request).await;
    let opened = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|_| named.is_none())
        .map(key);
    if let Some(hash) = opened {
        // Recorded before the client sees its session id, so its next
        // request finds the owner.
        let now = now_micros();
        let recorded = async {
            mcp_owners::record(state.db().pool(), &hash, &owner, now).await?;
            mcp_owners::forget_before(state.db().pool(), now - micros(KEEP)).await
        };
        if let Err(error) = recorded.await {
            return Error::from(error).into_response();
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_identity_has_its_own_owner() {
        let owners = [
            owner(&Caller::Unscoped),
            owner(&Caller::User("a".into())),
            owner(&Caller::User("b".into())),
            owner(&Caller::Agent {
                session_id: "a".into(),
            }),
        ];
        for (i, one) in owners.iter().enumerate() {
            for other in &owners[i + 1..] {
                assert_ne!(one, other);
            }
        }
    }
}
