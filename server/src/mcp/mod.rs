//! The MCP surfaces (streamable HTTP, rmcp):
//!
//! - `/mcp`: the external surface. Something outside the agent lists pending
//!   questions and answers them (L*, N*), lists tasks (T1, T2) and reads
//!   conversations. `ask_user_question_kandev` is never here (S1–S3).
//! - `/mcp/agent`: the agent surface, authenticated by a session's agent
//!   token: `ask_user_question_kandev` only, served without MCP sessions.
//!
//! Authentication happens in axum middleware in front of rmcp; tools read the
//! resulting [`Caller`] from the HTTP request parts. With several replicas,
//! the external surface's MCP sessions live in the shared database
//! ([`session_store`]), so a load balancer may send each request to any
//! replica.

mod agent;
mod agent_task;
pub mod answer_here;
pub(crate) mod args;
pub mod ask_tool;
mod binding;
mod external;
mod held_call;
mod inbox_app;
mod jsonrpc;
pub(crate) mod result;
mod session_store;
mod turns;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower_http::limit::RequestBodyLimitLayer;

use crate::auth::Caller;
use crate::auth::identify::identify;
use crate::http::error::Error;
use crate::state::AppState;

/// The MCP routes, each behind its own authentication.
pub fn routes(state: &AppState) -> Router<AppState> {
    // `Host` and `Origin` are checked for every route, these included, by
    // one policy (`crate::http::same_origin`).
    let config = || {
        StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_cancellation_token(state.shutdown.child_token())
    };
    let sessions: binding::Sessions = Arc::new(LocalSessionManager::default());
    let open = sessions.clone();
    #[allow(clippy::cast_precision_loss)] // sessions far below 2^52
    state.measure.probe(
        "clarify_mcp_sessions",
        vec![("surface", "mcp".to_owned())],
        // Never waits: a scrape during a change keeps the last count.
        Box::new(move || open.sessions.try_read().ok().map(|s| s.len() as f64)),
    );
    let external = {
        let state = state.clone();
        let mut config = config();
        if state.db().backend().shared() {
            config.session_store = Some(Arc::new(session_store::SharedSessions::new(
                state.db().clone(),
                "mcp",
            )));
        }
        StreamableHttpService::new(
            move || Ok(external::ExternalServer::new(state.clone())),
            sessions.clone(),
            config,
        )
    };
    let agent = {
        let state = state.clone();
        // An agent's one call needs no MCP session: served statelessly (as
        // the 2026-07-28 era always is), it costs memory only while it
        // blocks (a session cost ~55 KiB more, `tests/benches/waiters.rs`),
        // and any replica serves it. Progress rides the call's own stream;
        // a client that gives up closes it, which cancels the call.
        let mut config = config();
        config.legacy_session_mode = false;
        StreamableHttpService::new(
            move || Ok(agent::AgentServer::new(state.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    };
    let agent_routes = Router::new()
        .nest_service("/mcp/agent", agent)
        .layer(from_fn_with_state(turns::Turns::new(), held_call::hold))
        .layer(axum::middleware::from_fn(jsonrpc::well_formed))
        .layer(RequestBodyLimitLayer::new(binding::MAX_BODY))
        .layer(from_fn_with_state(state.clone(), require_agent));
    let external_routes = Router::new()
        .nest_service("/mcp", external)
        .layer(axum::middleware::from_fn(jsonrpc::well_formed))
        .layer(from_fn_with_state(
            (state.clone(), "mcp", sessions),
            binding::bind,
        ))
        .layer(RequestBodyLimitLayer::new(binding::MAX_BODY))
        .layer(crate::http::identity::layer(state.clone()));
    agent_routes.merge(external_routes)
}

/// The agent surface takes only a session's agent token, with auth on or off:
/// the token is what says which session the agent may ask on.
async fn require_agent(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Boxed, as in `http::identity::layer`: done before the call runs.
    match Box::pin(identify(state.db(), request.headers(), state.config.auth)).await {
        Ok(Some(caller)) if caller.agent().is_some() => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Ok(_) => Error::Unauthorized.into_response(),
        Err(error) => Error::from(error).into_response(),
    }
}

/// The caller the identity middleware recorded on the HTTP request of a
/// tool call.
///
/// # Errors
/// None recorded: a route outside the identity layer, a wiring error
/// refused rather than given some default identity.
fn caller_of(parts: &http::request::Parts) -> Result<Caller, rmcp::ErrorData> {
    parts
        .extensions
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| rmcp::ErrorData::internal_error("no caller identified", None))
}
