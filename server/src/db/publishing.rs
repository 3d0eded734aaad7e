//! What publishing a session's events reads, in one statement: the
//! session's state, whether it has an active bundle (together its pending
//! action, T1), and its workspace's notification webhook, Slack and
//! Discord channels.

use sqlx::AnyExecutor;

use super::clarification::active;

/// A session as its events need it.
#[derive(Debug, Clone)]
pub struct Publishing {
    /// The session's state.
    pub state: clarify_core::SessionState,
    /// Whether one of its bundles is active (D4): 1 or 0.
    pub waiting: i64,
    /// Its workspace's own webhook.
    pub webhook_url: Option<String>,
    /// Its workspace's own Slack channel.
    pub slack_channel: Option<String>,
    /// Its workspace's own Discord channel.
    pub discord_channel: Option<String>,
}

impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for Publishing {
    fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
        use sqlx::Row as _;
        Ok(Self {
            state: super::row::parsed(row, "state")?,
            waiting: row.try_get("waiting")?,
            webhook_url: row.try_get("webhook_url")?,
            slack_channel: row.try_get("slack_channel")?,
            discord_channel: row.try_get("discord_channel")?,
        })
    }
}

/// [`Publishing`] for `session_id`.
///
/// # Errors
/// Database errors.
pub async fn publishing(
    db: impl AnyExecutor<'_>,
    session_id: &str,
) -> sqlx::Result<Option<Publishing>> {
    sqlx::query_as(super::sql(publishing_sql()))
        .bind(session_id)
        .fetch_optional(db)
        .await
}

/// The query of [`publishing`] (`$1`: the session), public so that
/// `tests/query_plans.rs` can pin it to the session's open-questions index.
/// The open questions are read by the bound session, not correlated to
/// `s.id`: correlated, PostgreSQL was free to walk every session's open
/// questions and join afterwards, and under load did (issue 31).
#[must_use]
pub fn publishing_sql() -> String {
    format!(
        "SELECT s.state, \
             CASE WHEN EXISTS (SELECT 1 FROM task_session_messages m \
                 WHERE m.task_session_id = $1 AND {active}) THEN 1 ELSE 0 END AS waiting, \
             n.webhook_url, c.channel AS slack_channel, d.channel AS discord_channel \
         FROM task_sessions s \
         LEFT JOIN tasks t ON t.id = s.task_id \
         LEFT JOIN workspace_notify n ON n.workspace_id = t.workspace_id \
         LEFT JOIN workspace_slack c ON c.workspace_id = t.workspace_id \
         LEFT JOIN workspace_discord d ON d.workspace_id = t.workspace_id WHERE s.id = $1",
        active = active("m")
    )
}
