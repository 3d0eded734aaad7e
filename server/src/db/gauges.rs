//! What the operator's figures read when scraped (issue 49 item 1): the
//! questions waiting and the notices not yet sent. Both walk partial
//! indexes of open rows only, so a scrape costs the same however long the
//! history.

use sqlx::{AnyExecutor, Row as _};

/// Bundles waiting for an answer now: active by the one rule (D4).
///
/// # Errors
/// Database errors.
pub async fn questions_waiting(db: impl AnyExecutor<'_>) -> sqlx::Result<i64> {
    sqlx::query_scalar(super::sql(format!(
        "SELECT COUNT(DISTINCT m.pending_id) FROM task_session_messages m WHERE {}",
        super::clarification::active("m")
    )))
    .fetch_one(db)
    .await
}

/// Notices waiting to be sent, by target: (target, how many, the oldest's
/// creation time in microseconds).
///
/// # Errors
/// Database errors.
pub async fn notices_queued(db: impl AnyExecutor<'_>) -> sqlx::Result<Vec<(String, i64, i64)>> {
    let rows = sqlx::query(
        "SELECT target, COUNT(*), MIN(created_at) FROM notification_outbox \
         WHERE state = 'queued' GROUP BY target",
    )
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
        .collect()
}
