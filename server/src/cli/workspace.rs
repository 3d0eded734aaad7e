//! `clarify workspace notify`: the operator sets where an unowned
//! workspace's notices go (issue 26 item 10: its users may not), on the
//! database directly (no server needed).

use std::io::Write as _;

use clap::Subcommand;

use super::DatabaseArgs;
use crate::clock::now_micros;
use crate::db::{notifications, workspaces};

/// `clarify workspace …`.
#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Set where a workspace's notices go (a Slack or Mattermost incoming
    /// webhook, say); without a URL, remove it.
    Notify {
        /// The workspace's id.
        workspace_id: String,
        /// An http:// or https:// URL; omit to remove the webhook.
        url: Option<String>,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

/// Runs `clarify workspace …`.
///
/// # Errors
/// A message for the user: no such workspace, a URL that is not one, or the
/// database could not be had.
pub async fn run(command: WorkspaceCommand) -> Result<(), String> {
    let WorkspaceCommand::Notify {
        workspace_id,
        url,
        database,
    } = command;
    let url = url.as_deref().map(str::trim).filter(|u| !u.is_empty());
    if let Some(url) = url {
        crate::resume::parse_webhook_url("URL", url)?;
    }
    let db = database.open().await?;
    workspaces::get(db.pool(), &workspace_id)
        .await
        .map_err(|e| format!("cannot read workspaces: {e}"))?
        .ok_or_else(|| format!("no workspace with id {workspace_id}"))?;
    db.write(async |c| {
        notifications::set_workspace_webhook(c, &workspace_id, url, now_micros()).await
    })
    .await
    .map_err(|e| format!("cannot set the webhook: {e}"))?;
    let said = match url {
        // Not echoed: a Slack webhook's URL is its secret.
        Some(_) => format!("workspace {workspace_id}: notices go to the webhook given"),
        None => format!("workspace {workspace_id}: no webhook"),
    };
    writeln!(std::io::stdout(), "{said}").map_err(|e| format!("cannot write to stdout: {e}"))
}
