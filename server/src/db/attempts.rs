//! The attempts log (migration `0008_clarification_attempts`): every
//! attempt to resolve a bundle that did not win, who made it and how.

use clarify_core::AnsweredBy;
use sqlx::AnyExecutor;

/// One logged attempt.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    pub user_name: String,
    pub channel: String,
    pub client: String,
    /// `lost` or `inactive`.
    pub outcome: String,
    pub created_at: i64,
}

super::row::from_row!(AttemptRow {
    user_name,
    channel,
    client,
    outcome,
    created_at
});

/// Appends an attempt by `by` on `pending_id` that ended in `outcome`.
///
/// # Errors
/// Database errors.
pub async fn record(
    db: impl AnyExecutor<'_>,
    id: &str,
    pending_id: &str,
    by: &AnsweredBy,
    outcome: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO clarification_attempts \
         (id, pending_id, user_name, channel, client, outcome, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(id)
    .bind(pending_id)
    .bind(&by.user)
    .bind(&by.channel)
    .bind(&by.client)
    .bind(outcome)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// The attempts on `pending_id`, oldest first.
///
/// # Errors
/// Database errors.
pub async fn of_bundle(
    db: impl AnyExecutor<'_>,
    pending_id: &str,
) -> sqlx::Result<Vec<AttemptRow>> {
    sqlx::query_as(
        "SELECT user_name, channel, client, outcome, created_at FROM clarification_attempts \
         WHERE pending_id = $1 ORDER BY created_at, id",
    )
    .bind(pending_id)
    .fetch_all(db)
    .await
}
