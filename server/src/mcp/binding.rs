//! MCP sessions belong to the identity that opened them: a request naming a
//! session (`Mcp-Session-Id`) is served only for that same identity, so a
//! session id that leaks (a log, a proxy) is useless under another token.
//! Any other caller is told the session does not exist, which MCP clients
//! answer by initializing a session of their own. A user may hold a
//! bounded number of live sessions, and a request body is bounded too.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::auth::Caller;
use crate::clock::{micros, now_micros};
use crate::db::mcp_owners;
use crate::http::error::Error;
use crate::ids::hash_secret;
use crate::state::AppState;

/// The header naming a streamable-HTTP MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How long an unused session's owner is remembered (replicas keep the
/// sessions themselves as long).
const KEEP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// A session unused for longer is not counted as live: rmcp ends a local
/// session idle for five minutes (its `keep_alive`).
const LIVE: std::time::Duration = std::time::Duration::from_secs(300);

/// Uses are recorded at most this often per session.
const TOUCH_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The largest MCP request body read here (an `initialize`'s parameters are
/// stored with its session, so they are bounded too).
pub const MAX_BODY: usize = 1 << 20;

/// The largest `initialize` read: its parameters (the client's name and
/// capabilities) are kept with the session for as long as it lives, so
/// they are bounded far below [`MAX_BODY`] (issue 26: sixteen sessions with
/// a 900 KB `clientInfo.name` each cost 100 MB).
pub const MAX_INITIALIZE: usize = 64 << 10;

/// Live MCP sessions one user (with the agents of the sessions they
/// created) may hold under `--auth`, by default.
pub const PER_USER: usize = 16;

/// Live MCP sessions the one caller of a server without auth may hold, by
/// default: every client of the machine's owner is that caller, so the
/// share is a population's (issue 26: the conformance suite opens one per
/// scenario and ends few), still a bound on memory; beyond it the least
/// recently used gives way ([`evict_oldest`]).
pub const PER_UNSCOPED: usize = 256;

/// What a refused `initialize` tells the client to wait before another.
const RETRY_AFTER_SECONDS: u64 = 30;

/// The sessions rmcp holds in this process for one surface, so that an
/// evicted session's memory goes with it.
pub type Sessions = Arc<LocalSessionManager>;

/// The key a session is recorded by: a hash of its surface and id, never
/// the id itself.
fn session_key(surface: &str, session: &str) -> String {
    hash_secret(&format!("{surface}\n{session}"))
}

/// Without auth every local client is the one caller, so a full share is
/// not refused: the least recently used session gives way (its client is
/// told 404 next and initializes anew, as MCP clients do), and no client
/// can lock the others out (issue 26: the conformance suite run after run
/// against one server).
async fn evict_oldest(
    db: &crate::db::Db,
    holder: &str,
    surface: &str,
    sessions: &LocalSessionManager,
) -> sqlx::Result<()> {
    let Some(hash) = mcp_owners::oldest(db.pool(), holder).await? else {
        return Ok(());
    };
    db.write(async |c| mcp_owners::forget(c, &hash).await)
        .await?;
    let victim = sessions
        .sessions
        .read()
        .await
        .keys()
        .find(|id| session_key(surface, id) == hash)
        .cloned();
    if let Some(id) = victim
        && let Err(error) = sessions.close_session(&id).await
    {
        tracing::warn!(%error, "an evicted MCP session could not be closed; it idles out");
    }
    Ok(())
}

/// The credential a session is bound to: another token of the same user
/// cannot use it (its quota, though, is the user's: [`Caller::holder`]).
fn owner(caller: &Caller) -> String {
    match caller {
        Caller::Unscoped => "unscoped".to_owned(),
        Caller::User(id) => format!("user:{id}"),
        // Without auth every caller is the one local user (A4): a session
        // opened with an agent token stays usable without it, and back.
        Caller::Agent(agent) if !agent.scoped => "unscoped".to_owned(),
        Caller::Agent(agent) => format!("agent:{}", agent.session_id),
    }
}

/// The id of the `initialize` in a JSON-RPC body (one message or a
/// batch), if it opens a session.
fn initialize_id(body: &[u8]) -> Option<serde_json::Value> {
    let value = serde_json::from_slice::<serde_json::Value>(body).ok()?;
    let init = |m: &serde_json::Value| (m["method"] == "initialize").then(|| m["id"].clone());
    match &value {
        serde_json::Value::Array(batch) => batch.iter().find_map(init),
        message => init(message),
    }
}

/// The refusal of an `initialize` beyond `cap`: 429 with `Retry-After`, and
/// a JSON-RPC error answering the request, which MCP clients show.
fn too_many(id: &serde_json::Value, cap: usize) -> Response {
    let message = format!(
        "too many MCP sessions open for this user (at most {cap} live); end some \
         (DELETE with Mcp-Session-Id) or let them idle out"
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32000, "message": message},
    });
    (
        http::StatusCode::TOO_MANY_REQUESTS,
        [(http::header::RETRY_AFTER, RETRY_AFTER_SECONDS.to_string())],
        axum::Json(body),
    )
        .into_response()
}

/// The middleware, inside the identity layer of one `surface` (its name
/// keys the sessions, so a surface never sees another's; the agent surface
/// has none).
pub async fn bind(
    State((state, surface, sessions)): State<(AppState, &'static str, Sessions)>,
    request: Request,
    next: Next,
) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return Error::Unauthorized.into_response();
    };
    let owner = owner(&caller);
    let holder = caller.holder();
    let key = |session: &str| session_key(surface, session);
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(key);
    let now = now_micros();
    let db = state.db();
    let pool = db.pool();
    let ends = request.method() == http::Method::DELETE;
    let request = match &named {
        Some(hash) => {
            let last_seen = match mcp_owners::owner(pool, hash).await {
                Ok(Some((recorded, last_seen))) if recorded == owner => last_seen,
                Ok(_) => return Error::NotFound("MCP session").into_response(),
                Err(error) => return Error::from(error).into_response(),
            };
            // A write at most once a minute per session, not one a request.
            if last_seen < now - micros(TOUCH_EVERY)
                && let Err(error) = db
                    .write(async |c| mcp_owners::touch(c, hash, now).await)
                    .await
            {
                return Error::from(error).into_response();
            }
            request
        }
        None => {
            // A request that may open a session: read it (bounded) to see.
            let (parts, body) = request.into_parts();
            let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
                Ok(bytes) => bytes,
                Err(failed) if crate::serve::body::too_slow(&failed) => {
                    return Error::RequestTimeout.into_response();
                }
                Err(_) => return Error::PayloadTooLarge.into_response(),
            };
            if let Some(id) = initialize_id(&bytes) {
                if bytes.len() > MAX_INITIALIZE {
                    return Error::PayloadTooLarge.into_response();
                }
                let cap =
                    state
                        .config
                        .mcp_sessions_per_user
                        .unwrap_or(if caller.sees_everything() {
                            PER_UNSCOPED
                        } else {
                            PER_USER
                        });
                match mcp_owners::live_count(pool, &holder, now - micros(LIVE)).await {
                    Ok(live) if usize::try_from(live).unwrap_or(usize::MAX) >= cap => {
                        if !caller.sees_everything() {
                            return too_many(&id, cap);
                        }
                        if let Err(error) = evict_oldest(db, &holder, surface, &sessions).await {
                            return Error::from(error).into_response();
                        }
                    }
                    Ok(_) => {}
                    Err(error) => return Error::from(error).into_response(),
                }
            }
            Request::from_parts(parts, axum::body::Body::from(bytes))
        }
    };
    let response = next.run(request).await;
    if let (true, Some(hash)) = (ends && response.status().is_success(), &named) {
        // Ended: its place is free at once, not after it idles out.
        if let Err(error) = db.write(async |c| mcp_owners::forget(c, hash).await).await {
            tracing::warn!(%error, "an ended MCP session still counts until it idles out");
        }
        return response;
    }
    let opened = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|_| named.is_none())
        .map(key);
    if let Some(hash) = opened {
        // Recorded before the client sees its session id, so its next
        // request finds the owner.
        let recorded = db
            .write(async |c| {
                mcp_owners::record(&mut *c, &hash, &owner, &holder, now).await?;
                mcp_owners::forget_before(c, now - micros(KEEP)).await
            })
            .await;
        if let Err(error) = recorded {
            return Error::from(error).into_response();
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_initialize_is_recognised_alone_or_in_a_batch() {
        assert_eq!(
            initialize_id(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#),
            Some(serde_json::json!(1))
        );
        assert_eq!(
            initialize_id(br#"[{"method":"ping"},{"id":"a","method":"initialize"}]"#),
            Some(serde_json::json!("a"))
        );
        assert_eq!(
            initialize_id(br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            None
        );
        assert_eq!(initialize_id(b"not json"), None);
    }

    #[test]
    fn each_identity_has_its_own_owner() {
        let owners = [
            owner(&Caller::Unscoped),
            owner(&Caller::User("a".into())),
            owner(&Caller::User("b".into())),
            owner(&Caller::Agent(crate::auth::Agent {
                session_id: "a".into(),
                creator: Some("a".into()),
                scoped: true,
            })),
        ];
        for (i, one) in owners.iter().enumerate() {
            for other in &owners[i + 1..] {
                assert_ne!(one, other);
            }
        }
    }
}
