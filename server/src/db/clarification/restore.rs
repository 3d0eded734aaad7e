//! Taking a claim back (R7, R6): a delivery that failed or was abandoned
//! reopens its bundle, each rewrite fenced by the claim's token; and the
//! claims a crash left undelivered, for the sweep to find.

use clarify_core::{ClarificationMetadata, Status};
use sqlx::AnyExecutor;

use super::{CLARIFICATION_REQUEST, load, lock_bundle, write_metadata};
use crate::db::{Db, Tx};

/// Which claimed, undelivered rows a delivery rewrite may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// Every one (one process, just started: nobody else is delivering).
    Any,
    /// Those untouched since then (abandoned by a replica that died).
    UntouchedBefore(i64),
    /// Those of this delivery: still carrying its token.
    Claim(i64),
}

impl Guard {
    fn admits(self, updated_at: i64) -> bool {
        match self {
            Self::Any => true,
            Self::UntouchedBefore(cutoff) => updated_at < cutoff,
            Self::Claim(token) => updated_at == token,
        }
    }
}

/// Rolls a claimed bundle whose delivery failed, or was abandoned, back to
/// pending, so it is answerable again (R7, R6). Returns whether anything was
/// restored.
///
/// # Errors
/// Database errors.
pub async fn restore(db: &Db, pending_id: &str, now: i64, guard: Guard) -> sqlx::Result<bool> {
    rewrite_delivery_pending(db, pending_id, now, guard, |meta| {
        meta.status = Status::Pending.into();
        meta.response = None;
        meta.response_delivery_pending = false;
        meta.resume_attempted = false;
        meta.awaiting_pickup = false;
        meta.answered_by = None;
    })
    .await
}

/// Rewrites the claimed, undelivered rows of a bundle under their row locks,
/// so two replicas reconciling at once change each row once.
async fn rewrite_delivery_pending(
    db: &Db,
    pending_id: &str,
    now: i64,
    guard: Guard,
    change: impl Fn(&mut ClarificationMetadata),
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    let changed = rewrite_in(&mut tx, db, pending_id, now, guard, change).await?;
    tx.commit().await?;
    Ok(changed)
}

async fn rewrite_in(
    tx: &mut Tx,
    db: &Db,
    pending_id: &str,
    now: i64,
    guard: Guard,
    change: impl Fn(&mut ClarificationMetadata),
) -> sqlx::Result<bool> {
    lock_bundle(tx, db, pending_id).await?;
    let bundle = load(&mut **tx, pending_id).await?;
    let mut changed = false;
    for (row, mut message) in bundle
        .iter()
        .flat_map(|b| b.rows.iter().zip(b.messages.clone()))
    {
        if !message.metadata.response_delivery_pending || !guard.admits(row.updated_at) {
            continue;
        }
        change(&mut message.metadata);
        write_metadata(tx, &row.id, &message.metadata, now).await?;
        changed = true;
    }
    Ok(changed)
}

/// Every bundle left claimed but undelivered, e.g. by a crash (R6).
///
/// # Errors
/// Database errors.
pub async fn delivery_pending(db: impl AnyExecutor<'_>) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(crate::db::sql(format!(
        "SELECT DISTINCT m.pending_id FROM task_session_messages m \
         WHERE m.type = '{CLARIFICATION_REQUEST}' AND m.clarification_delivery_pending = 1"
    )))
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(p,)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::Guard;

    #[test]
    fn a_guard_admits_only_the_rows_its_delivery_may_touch() {
        assert!(
            Guard::Any.admits(5),
            "a process just started owns every claim"
        );
        assert!(
            Guard::UntouchedBefore(10).admits(9),
            "abandoned long enough"
        );
        assert!(
            !Guard::UntouchedBefore(10).admits(10),
            "touched at the cutoff"
        );
        assert!(Guard::Claim(7).admits(7), "this delivery's own claim");
        assert!(!Guard::Claim(7).admits(8), "a claim taken back and re-made");
    }
}
