//! The REST API under `/api/v1` (DESIGN.md "Contract").

mod auth;
mod clarification;
pub mod error;
pub mod identity;
pub mod json;
mod management;
pub mod same_origin;
pub mod security_headers;
mod ws;

use axum::Router;
use axum::routing::{get, post};

use crate::AppState;

/// Every `/api/v1` route: the protected ones behind the identity layer,
/// login and "who am I" open.
pub fn routes(state: &AppState) -> Router<AppState> {
    let open = Router::new()
        .route("/auth/login", post(auth::login))
        .route("/auth/logout", post(auth::logout))
        .route("/auth/me", get(auth::me));
    let sockets = ws::limits::Sockets::new(
        state
            .config
            .ws_per_identity
            .unwrap_or(ws::limits::PER_IDENTITY),
        state.config.ws_total.unwrap_or(ws::limits::TOTAL),
    );
    protected()
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            identity::require_identity,
        ))
        .layer(axum::Extension(sockets))
        .merge(open)
}

fn protected() -> Router<AppState> {
    Router::new()
        .route(
            "/workspaces",
            post(management::create_workspace).get(management::list_workspaces),
        )
        .route(
            "/tasks",
            post(management::create_task).get(management::list_tasks),
        )
        .route("/tasks/{id}", get(management::get_task))
        .route(
            "/tasks/{id}/sessions",
            post(management::create_session).get(management::list_sessions),
        )
        .route(
            "/sessions/{id}",
            get(management::get_session).patch(management::patch_session),
        )
        .route("/sessions/{id}/turns", post(management::start_turn))
        .route(
            "/sessions/{id}/turns/{turn_id}/complete",
            post(management::complete_turn),
        )
        .route("/sessions/{id}/messages", get(management::list_messages))
        .route("/clarification/request", post(clarification::create))
        .route("/clarification/{id}", get(clarification::read))
        .route("/clarification/{id}/wait", get(clarification::wait))
        .route("/clarification/{id}/respond", post(clarification::respond))
        .route("/clarification/{id}/cancel", post(clarification::cancel))
        .route("/clarification/{id}/detach", post(clarification::detach))
        .route("/ws", get(ws::events))
}
