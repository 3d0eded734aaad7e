//! A workspace's own notification webhook (issue 18): read and set by
//! whoever owns the workspace. An unowned workspace's webhook is the
//! operator's (issue 26 item 10): a Slack webhook's URL is its secret, so
//! under auth its users see only the host and cannot replace it; the
//! operator sets it with `clarify workspace notify`. With auth off the one
//! caller is the operator.

use axum::extract::State;
use axum::response::IntoResponse;
use clarify_core::{ErrorBody, api};

use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::notifications::{self, WorkspaceChat};
use crate::db::workspaces;
use crate::http::error::{Error, Result};
use crate::http::extract::Path;
use crate::http::json::Json;
use crate::state::AppState;

/// The longest webhook URL taken.
const LONGEST_URL: usize = 2000;

/// What `caller` may do with a workspace's webhook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Read it whole and set it: the owner, or the operator.
    Own,
    /// Read its host only: a user of an unowned workspace under auth.
    HostOnly,
}

/// What `caller` may do with workspace `id`'s notifications; unknown and
/// hidden are the same 404.
async fn access(state: &AppState, caller: &Caller, id: &str) -> Result<Access> {
    let user = caller.person()?;
    let workspace = workspaces::get(state.db().pool(), id).await?;
    match (workspace, user) {
        (Some(_), None) => Ok(Access::Own),
        (Some(w), Some(user)) if w.owner_id == user => Ok(Access::Own),
        (Some(w), Some(_)) if w.owner_id.is_empty() => Ok(Access::HostOnly),
        _ => Err(Error::NotFound("workspace")),
    }
}

/// `url` as a user who may not see it whole is shown it: its scheme and
/// host, the rest (a Slack webhook's secret path) elided.
fn host_only(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => match parsed.host_str() {
            Some(host) => format!("{}://{host}/…", parsed.scheme()),
            None => "…".to_owned(),
        },
        Err(_) => "…".to_owned(),
    }
}

/// Where a workspace's notices go.
#[utoipa::path(
    get,
    path = "/workspaces/{id}/notify",
    tag = "workspaces",
    params(("id" = String, Path, description = "The workspace's id")),
    responses(
        (status = 200, description = "Its webhook (`\"\"` for none); of an unowned workspace under auth, only its host", body = api::WorkspaceNotify),
        (status = 404, description = "No such workspace, or not yours", body = ErrorBody),
    )
)]
pub async fn get_notify(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    let access = access(&state, &caller, &id).await?;
    let webhook_url = notifications::workspace_webhook(state.db().pool(), &id)
        .await?
        .unwrap_or_default();
    let webhook_url = match access {
        Access::HostOnly if !webhook_url.is_empty() => host_only(&webhook_url),
        _ => webhook_url,
    };
    let slack_channel =
        notifications::workspace_chat_channel(state.db().pool(), WorkspaceChat::Slack, &id)
            .await?
            .unwrap_or_default();
    let discord_channel =
        notifications::workspace_chat_channel(state.db().pool(), WorkspaceChat::Discord, &id)
            .await?
            .unwrap_or_default();
    Ok(axum::Json(api::WorkspaceNotify {
        workspace_id: id,
        webhook_url,
        slack_channel,
        discord_channel,
    }))
}

/// Sets (or, with `null` or `""`, removes) where a workspace's notices go:
/// a JSON POST when a question waits, is resolved, expires or is
/// cancelled, and a reminder before it expires, and the Slack and Discord
/// channels its questions are posted to (with the server's Slack app and
/// Discord bot). The URL is held to the same network policy as resume
/// webhooks.
#[utoipa::path(
    put,
    path = "/workspaces/{id}/notify",
    tag = "workspaces",
    params(("id" = String, Path, description = "The workspace's id")),
    request_body = api::SetWorkspaceNotify,
    responses(
        (status = 200, description = "Set", body = api::WorkspaceNotify),
        (status = 403, description = "An unowned workspace's webhook is the operator's", body = ErrorBody),
        (status = 404, description = "No such workspace, or not yours", body = ErrorBody),
    )
)]
pub async fn set_notify(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<api::SetWorkspaceNotify>,
) -> Result<impl IntoResponse> {
    if access(&state, &caller, &id).await? != Access::Own {
        return Err(Error::Forbidden(
            "an unowned workspace's webhook is the operator's: set it with `clarify workspace \
             notify WORKSPACE_ID URL`",
        ));
    }
    let raw = body.webhook_url.as_deref().unwrap_or_default();
    // Counted as sent, before trimming: the limit the contract states.
    if raw.chars().count() > LONGEST_URL {
        return Err(Error::BadRequest(format!(
            "webhook_url: at most {LONGEST_URL} characters"
        )));
    }
    let url = raw.trim();
    if !url.is_empty() {
        state
            .lifecycle
            .resolving
            .resumer()
            .webhooks()
            .check("webhook_url", url)
            .map_err(Error::BadRequest)?;
    }
    let channel = slack_channel(body.slack_channel.as_deref())?;
    let discord = discord_channel(body.discord_channel.as_deref())?;
    let set = (!url.is_empty()).then_some(url);
    let now = now_micros();
    let mut tx = state.db().begin_write().await?;
    notifications::set_workspace_webhook(&mut tx, &id, set, now).await?;
    notifications::set_workspace_chat_channel(&mut tx, WorkspaceChat::Slack, &id, channel, now)
        .await?;
    notifications::set_workspace_chat_channel(&mut tx, WorkspaceChat::Discord, &id, discord, now)
        .await?;
    tx.commit().await?;
    Ok(axum::Json(api::WorkspaceNotify {
        workspace_id: id,
        webhook_url: url.to_owned(),
        slack_channel: channel.unwrap_or_default().to_owned(),
        discord_channel: discord.unwrap_or_default().to_owned(),
    }))
}

/// A workspace's Discord channel as given: a channel's id, at most 20
/// digits (a snowflake; it becomes a path of Discord's API); `None` for
/// none.
fn discord_channel(given: Option<&str>) -> Result<Option<&str>> {
    let channel = given.unwrap_or_default();
    if channel.len() > 20 || !channel.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::BadRequest(
            "discord_channel: a channel's id, at most 20 digits".to_owned(),
        ));
    }
    Ok((!channel.is_empty()).then_some(channel))
}

/// A workspace's Slack channel as given: at most 80 characters of
/// letters, digits, `#`, `.`, `_` and `-` (a channel's id or name, which
/// can then never be markup or a path); `None` for none.
fn slack_channel(given: Option<&str>) -> Result<Option<&str>> {
    let channel = given.unwrap_or_default();
    if channel.chars().count() > 80
        || !channel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "#._-".contains(c))
    {
        return Err(Error::BadRequest(
            "slack_channel: at most 80 letters, digits, '#', '.', '_' or '-' (a channel's id, \
             such as C0123456789)"
                .to_owned(),
        ));
    }
    Ok((!channel.is_empty()).then_some(channel))
}
