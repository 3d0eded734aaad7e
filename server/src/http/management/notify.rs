//! A workspace's own notification webhook (issue 18): read and set by
//! whoever owns the workspace (an unowned one: whoever may see it, which
//! is everyone who could read its questions anyway).

use axum::extract::State;
use axum::response::IntoResponse;
use clarify_core::{ErrorBody, api};

use crate::AppState;
use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::{notifications, workspaces};
use crate::http::error::{Error, Result};
use crate::http::extract::Path;
use crate::http::json::Json;

/// The longest webhook URL taken.
const LONGEST_URL: usize = 2000;

/// The workspace `id` if `caller` may set its notifications; unknown and
/// hidden are the same 404.
async fn own_workspace(state: &AppState, caller: &Caller, id: &str) -> Result<()> {
    let user = caller.person()?;
    let workspace = workspaces::get(state.db().pool(), id).await?;
    let owned =
        workspace.is_some_and(|w| w.owner_id.is_empty() || user.is_none_or(|u| w.owner_id == u));
    if owned {
        Ok(())
    } else {
        Err(Error::NotFound("workspace"))
    }
}

/// Where a workspace's notices go.
#[utoipa::path(
    get,
    path = "/workspaces/{id}/notify",
    tag = "workspaces",
    params(("id" = String, Path, description = "The workspace's id")),
    responses(
        (status = 200, description = "Its webhook (`\"\"` for none)", body = api::WorkspaceNotify),
        (status = 404, description = "No such workspace, or not yours", body = ErrorBody),
    )
)]
pub async fn get_notify(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    own_workspace(&state, &caller, &id).await?;
    let webhook_url = notifications::workspace_webhook(state.db().pool(), &id).await?;
    Ok(axum::Json(api::WorkspaceNotify {
        workspace_id: id,
        webhook_url: webhook_url.unwrap_or_default(),
    }))
}

/// Sets (or, with `null` or `""`, removes) where a workspace's notices go:
/// a JSON POST when a question waits, is resolved, expires or is
/// cancelled, and a reminder before it expires. The URL is held to the
/// same network policy as resume webhooks.
#[utoipa::path(
    put,
    path = "/workspaces/{id}/notify",
    tag = "workspaces",
    params(("id" = String, Path, description = "The workspace's id")),
    request_body = api::SetWorkspaceNotify,
    responses(
        (status = 200, description = "Set", body = api::WorkspaceNotify),
        (status = 404, description = "No such workspace, or not yours", body = ErrorBody),
    )
)]
pub async fn set_notify(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<api::SetWorkspaceNotify>,
) -> Result<impl IntoResponse> {
    own_workspace(&state, &caller, &id).await?;
    let url = body
        .webhook_url
        .as_deref()
        .map(str::trim)
        .unwrap_or_default();
    if url.chars().count() > LONGEST_URL {
        return Err(Error::BadRequest(format!(
            "webhook_url: at most {LONGEST_URL} characters"
        )));
    }
    if !url.is_empty() {
        state
            .lifecycle
            .resumer()
            .webhooks()
            .check("webhook_url", url)
            .map_err(Error::BadRequest)?;
    }
    let set = (!url.is_empty()).then_some(url);
    notifications::set_workspace_webhook(state.db().pool(), &id, set, now_micros()).await?;
    Ok(axum::Json(api::WorkspaceNotify {
        workspace_id: id,
        webhook_url: url.to_owned(),
    }))
}
