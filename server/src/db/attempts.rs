//! The attempts log (migration `0008_clarification_attempts`): every
//! attempt to resolve a bundle that did not win, who made it and how; the
//! first [`KEPT`] of a bundle, the rest only counted (migration
//! `0013_attempts_bound`).

use clarify_core::AnsweredBy;
use sqlx::AnyExecutor;

/// One logged attempt.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    pub id: String,
    pub user_name: String,
    pub channel: String,
    pub client: String,
    /// `lost` or `inactive`.
    pub outcome: String,
    pub created_at: i64,
}

super::row::from_row!(AttemptRow {
    id,
    user_name,
    channel,
    client,
    outcome,
    created_at
});

/// Losing attempts kept per bundle.
pub const KEPT: i64 = 100;

/// Appends an attempt by `by` on `pending_id` that ended in `outcome`, or,
/// when [`KEPT`] are logged already, counts it.
///
/// # Errors
/// Database errors.
pub async fn record(
    db: &mut sqlx::AnyConnection,
    id: &str,
    pending_id: &str,
    by: &AnsweredBy,
    outcome: &str,
    now: i64,
) -> sqlx::Result<()> {
    let logged = sqlx::query(
        "INSERT INTO clarification_attempts \
         (id, pending_id, user_name, channel, client, outcome, created_at) \
         SELECT $1, $2, $3, $4, $5, $6, $7 \
         WHERE (SELECT COUNT(*) FROM clarification_attempts WHERE pending_id = $2) < $8",
    )
    .bind(id)
    .bind(pending_id)
    .bind(&by.user)
    .bind(&by.channel)
    .bind(&by.client)
    .bind(outcome)
    .bind(now)
    .bind(KEPT)
    .execute(&mut *db)
    .await?;
    if logged.rows_affected() == 0 {
        sqlx::query(
            "INSERT INTO clarification_attempts_unlogged (pending_id, count) VALUES ($1, 1) \
             ON CONFLICT (pending_id) \
             DO UPDATE SET count = clarification_attempts_unlogged.count + 1",
        )
        .bind(pending_id)
        .execute(db)
        .await?;
    }
    Ok(())
}

/// How many attempts on `pending_id` were counted but not kept.
///
/// # Errors
/// Database errors.
pub async fn unlogged(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<i64> {
    let count: Option<i64> = sqlx::query_scalar(
        "SELECT count FROM clarification_attempts_unlogged WHERE pending_id = $1",
    )
    .bind(pending_id)
    .fetch_optional(db)
    .await?;
    Ok(count.unwrap_or(0))
}

/// A page of the attempts on `pending_id`, oldest first, strictly after
/// `after`; plus whether more exist.
///
/// # Errors
/// Database errors.
pub async fn of_bundle_page(
    db: impl AnyExecutor<'_>,
    pending_id: &str,
    after: Option<&clarify_core::Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<AttemptRow>, bool)> {
    let select = "SELECT id, user_name, channel, client, outcome, created_at \
         FROM clarification_attempts WHERE pending_id = $1";
    super::page::fetch_page(db, select, "", pending_id, after, limit).await
}
