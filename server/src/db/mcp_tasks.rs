//! Questions asked as MCP tasks (issue 30 item 3): whose task each is,
//! whether it was cancelled, and why a person declined it. The task's
//! state is its bundle's.

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
    /// Why the person who declined it did, `""` when not given.
    pub reject_reason: String,
}

/// The condition a claim reads under its lock: the bundle whose id is
/// bound to `pending_id` (a parameter, since SQLite's `RETURNING` cannot
/// name the updated table's alias inside a subquery) is a task its agent
/// still polls, so its answer is kept for that poll (pull delivery), never
/// handed over live nor resumed.
pub fn polled_sql(pending_id: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM mcp_tasks t WHERE t.pending_id = {pending_id} \
         AND t.cancelled_at IS NULL)"
    )
}

/// Records `pending_id` as a task of `session_id`, in the transaction that
/// asks it. Asked again (the identical question), the task is the agent's
/// to poll again: a cancel before is forgotten, its first `created_at` kept.
///
/// # Errors
/// Database errors.
pub async fn ask(
    db: &mut AnyConnection,
    pending_id: &str,
    session_id: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO mcp_tasks (pending_id, session_id, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (pending_id) DO UPDATE SET cancelled_at = NULL",
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
    let row: Option<(String, String, i64, Option<i64>, String)> = sqlx::query_as(
        "SELECT pending_id, session_id, created_at, cancelled_at, reject_reason \
         FROM mcp_tasks WHERE pending_id = $1 AND session_id = $2",
    )
    .bind(pending_id)
    .bind(session_id)
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(pending_id, session_id, created_at, cancelled_at, reject_reason)| McpTask {
            pending_id,
            session_id,
            created_at,
            cancelled_at,
            reject_reason,
        },
    ))
}

/// Marks the task cancelled, in the transaction that detaches its bundle.
///
/// # Errors
/// Database errors.
pub async fn cancel(db: &mut AnyConnection, pending_id: &str, now: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE mcp_tasks SET cancelled_at = $2 WHERE pending_id = $1")
        .bind(pending_id)
        .bind(now)
        .execute(db)
        .await?;
    Ok(())
}

/// Keeps why the task was declined, for the poll that collects it.
///
/// # Errors
/// Database errors.
pub async fn set_reject_reason(
    db: &mut AnyConnection,
    pending_id: &str,
    reason: &str,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE mcp_tasks SET reject_reason = $2 WHERE pending_id = $1")
        .bind(pending_id)
        .bind(reason)
        .execute(db)
        .await?;
    Ok(())
}
