//! The REST API under `/api/v1` (DESIGN.md "Contract"), and its OpenAPI
//! document, made from the same route table.

pub mod activity;
mod activity_chart;
mod activity_page;
mod admin;
pub mod answer_link;
pub mod audit;
mod audit_csv;
mod audit_row;
mod auth;
mod clarification;
pub mod error;
pub mod extract;
pub mod gate;
pub mod identity;
pub mod integrations;
pub mod json;
mod management;
pub mod measured;
pub mod metrics;
mod oidc;
mod openapi;
mod page;
mod pending;
mod pending_stream;
pub mod route;
pub mod same_origin;
pub mod security_headers;
mod visibility;
mod ws;

/// The header `clarify`'s command line sends with every request, so an
/// answer it gives is recorded as the `cli` channel (provenance).
pub const CLIENT_HEADER: &str = "x-clarify-client";

use axum::Router;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

/// Every `/api/v1` route (full paths): the protected ones behind the
/// identity layer; login, "who am I" and the OpenAPI document open; and
/// the Activity page.
pub fn routes(state: &AppState) -> Router<AppState> {
    let (router, api) = OpenApiRouter::new()
        .nest("/api/v1", api(state))
        .split_for_parts();
    router
        .merge(openapi::route(api, state.config.auth))
        .merge(activity_page::routes())
        // One layer for both (a `Router::layer` boxes each request's
        // future once more: `app`'s stack).
        .layer(
            tower::ServiceBuilder::new()
                .layer(axum::Extension(activity::TeamReads::default()))
                .layer(axum::Extension(ws::limits::sockets(
                    state.config.ws_per_user.unwrap_or(ws::limits::PER_USER),
                    state.config.ws_total.unwrap_or(ws::limits::TOTAL),
                ))),
        )
}

/// The route table; each handler's `#[utoipa::path]` gives both its route
/// and its documentation.
fn api(state: &AppState) -> OpenApiRouter<AppState> {
    let open = OpenApiRouter::new()
        .routes(routes!(auth::login))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::me))
        .routes(routes!(oidc::start))
        .routes(routes!(oidc::callback));
    protected()
        .route_layer(identity::layer(state.clone()))
        .merge(open)
}

fn protected() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(
            management::tasks::create_workspace,
            management::tasks::list_workspaces
        ))
        .routes(routes!(
            management::tasks::create_task,
            management::tasks::list_tasks
        ))
        .routes(routes!(management::tasks::get_task))
        .routes(routes!(audit::export))
        .routes(routes!(activity::figures))
        .routes(routes!(
            management::notify::get_notify,
            management::notify::set_notify
        ))
        .routes(routes!(
            management::sessions::create_session,
            management::sessions::list_sessions
        ))
        .routes(routes!(
            management::sessions::get_session,
            management::sessions::patch_session
        ))
        .routes(routes!(management::sessions::start_turn))
        .routes(routes!(management::sessions::complete_turn))
        .routes(routes!(management::sessions::list_messages))
        .routes(routes!(pending::list_pending))
        .routes(routes!(pending_stream::stream))
        .routes(routes!(clarification::create))
        .routes(routes!(clarification::read))
        .routes(routes!(clarification::wait))
        .routes(routes!(clarification::respond))
        .routes(routes!(clarification::respond_alike))
        .routes(routes!(clarification::attempts))
        .routes(routes!(clarification::cancel))
        .routes(routes!(clarification::assign))
        .routes(routes!(clarification::detach))
        .routes(routes!(ws::events))
}
