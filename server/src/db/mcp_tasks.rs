//! Questions asked as MCP tasks (issue 30 item 3): whose task each is and
//! whether it was cancelled. The task's state is its bundle's.

use sqlx::{AnyConnection, AnyExecutor};

/// One task row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTask {
    /// The bundle, which is the task (its id is the task id).
    pub pending_id: String,
    /// The session whose agent asked: the only caller that may see it.
    pub session_id: String,
    /// When the task was made (microseconds).
    pub created_at: i64,
    /// When the agent cancelled it, if it did.
    pub cancelled_at: Option<i64>,
}

/// Records `pending_id` as a task of `session_id`; an identical ask made
/// again keeps the first row, so the task keeps its first `created_at`.
///
/// # Errors
/// Database errors.
pub async fn insert(
    db: &mut AnyConnection,
    pending_id: &str,
    session_id: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO mcp_tasks (pending_id, session_id, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (pending_id) DO NOTHING",
    )
    .bind(pending_id)
    .bind(session_id)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// The task `pending_id` if `session_id` asked it: another session's task
/// reads as none, exactly as an unknown one does.
///
/// # Errors
/// Database errors.
pub async fn get(
    db: impl AnyExecutor<'_>,
    pending_id: &str,
    session_id: &str,
) -> sqlx::Result<Option<McpTask>> {
    let row: Option<(String, String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT pending_id, session_id, created_at, cancelled_at FROM mcp_tasks \
         WHERE pending_id = $1 AND session_id = $2",
    )
    .bind(pending_id)
    .bind(session_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(pending_id, session_id, created_at, cancelled_at)| McpTask {
            pending_id,
            session_id,
            created_at,
            cancelled_at,
        },
    ))
}

/// Marks the task cancelled (once: a second cancel keeps the first time).
///
/// # Errors
/// Database errors.
pub async fn cancel(
    db: &mut AnyConnection,
    pending_id: &str,
    session_id: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE mcp_tasks SET cancelled_at = $3 \
         WHERE pending_id = $1 AND session_id = $2 AND cancelled_at IS NULL",
    )
    .bind(pending_id)
    .bind(session_id)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}
