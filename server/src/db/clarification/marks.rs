//! The marks a delivery leaves on a won claim (R7, R6): made final,
//! resume attempted, kept for pickup. Each is one UPDATE fenced by the
//! claim's token.

use super::{CLARIFICATION_REQUEST, Guard, lock_bundle_sql};
use crate::db::batch::Batch;
use crate::db::{Backend, Db};
use clarify_core::metadata_key as key;

/// Marks a claimed bundle's delivery as done.
///
/// # Errors
/// Database errors.
pub async fn finalize(db: &Db, pending_id: &str, now: i64, guard: Guard) -> sqlx::Result<bool> {
    flag(db, pending_id, now, guard, Flags::Delivered).await
}

/// How a delivery changes its claimed rows' flags (written only when true,
/// as [`clarify_core::ClarificationMetadata`] does).
#[derive(Debug, Clone, Copy)]
enum Flags {
    /// Delivered: no flag left.
    Delivered,
    /// One more flag set.
    Marked(Mark),
}

/// Changes the flags of the claimed, undelivered rows `guard` admits, in
/// one guarded UPDATE (issue 17: a load and a write per row were a
/// transaction of their own). On PostgreSQL the rows are locked in id
/// order first, as every write of a bundle does, in the same trip as the
/// UPDATE (issue 50).
async fn flag(
    db: &Db,
    pending_id: &str,
    now: i64,
    guard: Guard,
    flags: Flags,
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    let mut batch = Batch::new();
    let changes = flag_steps(&mut batch, db.backend(), pending_id, now, guard, flags);
    let done = batch.run(&mut tx, db.backend()).await?;
    tx.commit().await?;
    Ok(done[changes].affected > 0)
}

/// [`finalize`] as steps of a batch; the returned step changes rows
/// exactly when the claim was still `guard`'s and is now final.
pub fn finalize_steps(
    batch: &mut Batch,
    backend: Backend,
    pending_id: &str,
    now: i64,
    guard: Guard,
) -> usize {
    flag_steps(batch, backend, pending_id, now, guard, Flags::Delivered)
}

/// [`flag`]'s steps: the lock (PostgreSQL), then the guarded UPDATE, the
/// step returned.
fn flag_steps(
    batch: &mut Batch,
    backend: Backend,
    pending_id: &str,
    now: i64,
    guard: Guard,
    flags: Flags,
) -> usize {
    if backend.shared() {
        batch.push(lock_bundle_sql(backend), vec![pending_id.into()]);
    }
    let (sql, token) = flag_sql(backend, guard, flags);
    batch.push(sql, vec![pending_id.into(), now.into(), token.into()])
}

/// The guarded UPDATE of [`flag_steps`] (`$1` the bundle, `$2` now, `$3` the
/// guard's token) and the token to bind.
fn flag_sql(backend: Backend, guard: Guard, flags: Flags) -> (String, i64) {
    let metadata = match flags {
        Flags::Delivered => backend.metadata_remove(&[
            key::RESPONSE_DELIVERY_PENDING,
            key::RESUME_ATTEMPTED,
            key::AWAITING_PICKUP,
        ]),
        Flags::Marked(Mark::ResumeAttempted) => backend.metadata_set(key::RESUME_ATTEMPTED, "true"),
        Flags::Marked(Mark::AwaitingPickup) => backend.metadata_set(key::AWAITING_PICKUP, "true"),
    };
    let (admitted, token) = match guard {
        Guard::Any => ("$3 = $3", 0),
        Guard::UntouchedBefore(cutoff) => ("m.updated_at < $3", cutoff),
        Guard::Claim(token) => ("m.updated_at = $3", token),
    };
    let sql = format!(
        "UPDATE task_session_messages AS m SET metadata = {metadata}, updated_at = $2 \
         WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}' \
         AND m.clarification_delivery_pending = 1 AND {admitted}"
    );
    (sql, token)
}

/// What a delivery records on its claim before handing the answer over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A resume dispatch is about to start: after a crash it may have
    /// reached the agent, so the claim is kept, never resent (at most once).
    ResumeAttempted,
    /// Nobody to hand it to (no agent attached, no resume target): kept for
    /// the agent to collect (pull delivery), never rolled back.
    AwaitingPickup,
}

/// Records `mark` on the claim carrying `token`. `false`: the claim is no
/// longer this delivery's. The rows carry `now` as their token afterwards.
///
/// # Errors
/// Database errors.
pub async fn mark(
    db: &Db,
    pending_id: &str,
    now: i64,
    token: i64,
    mark: Mark,
) -> sqlx::Result<bool> {
    flag(
        db,
        pending_id,
        now,
        Guard::Claim(token),
        Flags::Marked(mark),
    )
    .await
}
