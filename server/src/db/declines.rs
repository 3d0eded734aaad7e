//! Why a person declined a bundle (issue 45 item 4): a row beside the
//! bundle's, since the rows themselves keep no reason (R2b, a shape the
//! spec freezes). The claim that declines writes it; the asking agent's
//! delivery, the bundle's view and the transcript read it, and a losing
//! caller's replay never does (R2b).

use sqlx::AnyExecutor;

use super::batch::{Batch, Value};

/// Adds to `batch` the write of `reason` as why `pending_id` was declined
/// at `now`. An empty reason is written too: one left by a decline that
/// was taken back (R7a) must not be shown with this one.
pub fn record_step(batch: &mut Batch, pending_id: &str, reason: &str, now: i64) {
    batch.push(
        "INSERT INTO decline_reasons (pending_id, reason, declined_at) VALUES ($1, $2, $3) \
         ON CONFLICT (pending_id) DO UPDATE SET reason = excluded.reason, \
         declined_at = excluded.declined_at"
            .to_owned(),
        vec![
            Value::from(pending_id),
            Value::from(reason),
            Value::from(now),
        ],
    );
}

/// Why `pending_id` was declined: `""` when no reason was given, or it was
/// not declined.
///
/// # Errors
/// Database errors.
pub async fn reason(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<String> {
    let reason: Option<String> = sqlx::query_scalar(super::sql(
        "SELECT reason FROM decline_reasons WHERE pending_id = $1".to_owned(),
    ))
    .bind(pending_id)
    .fetch_optional(db)
    .await?;
    Ok(reason.unwrap_or_default())
}

/// A column of a message row of `alias` that reads its bundle's decline
/// reason (`""` for none), for the transcript's reads: only on a row that
/// is declined, so a decline taken back (R7a, R6) and answered since shows
/// none.
#[must_use]
pub fn reason_column(alias: &str) -> String {
    format!(
        "COALESCE((SELECT d.reason FROM decline_reasons d WHERE d.pending_id = {alias}.pending_id \
             AND {alias}.clarification_status = 'rejected'), '') AS reject_reason"
    )
}
