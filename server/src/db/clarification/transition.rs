//! Transitions of active questions that are not resolutions: detach,
//! expire, cancel.

use clarify_core::{ClarificationMetadata, Status};

use super::{active, write_metadata};
use crate::db::batch::Batch;
use crate::db::{Backend, Db, Tx};

/// Which active questions a transition applies to.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every active question of a session.
    Session(&'a str),
    /// The active questions of one bundle.
    Bundle(&'a str),
}

impl<'a> Scope<'a> {
    fn column(self) -> (&'static str, &'a str) {
        match self {
            Scope::Session(id) => ("task_session_id", id),
            Scope::Bundle(id) => ("pending_id", id),
        }
    }
}

/// A transition of active questions that is not a resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The agent stopped waiting; the bundle stays active and answerable.
    Detach,
    /// The asking agent waits on it again after a detach: attached again,
    /// so an answer is handed to its wait, not also resumed (found by
    /// `tests/tests/delivery_sequences.rs`).
    Reattach,
    /// The session ended before anyone answered.
    Expire,
    /// The agent withdrew the question (A9).
    Cancel,
}

/// Applies `transition` to the active questions in `scope`, skipping rows it
/// would not change (an already-detached row is not rewritten), and returns
/// the pending ids it changed.
///
/// # Errors
/// Database errors.
pub async fn transition(
    db: &Db,
    scope: Scope<'_>,
    transition: Transition,
    now: i64,
) -> sqlx::Result<Vec<String>> {
    let mut tx = db.begin_write().await?;
    let changed = transition_in(&mut tx, db, scope, transition, now).await?;
    tx.commit().await?;
    Ok(changed)
}

/// [`transition()`] inside the caller's write transaction (a session's state
/// change and the expiry it causes commit together).
///
/// # Errors
/// Database errors.
pub async fn transition_in(
    tx: &mut Tx,
    db: &Db,
    scope: Scope<'_>,
    transition: Transition,
    now: i64,
) -> sqlx::Result<Vec<String>> {
    let (column, key) = scope.column();
    let status = match transition {
        Transition::Expire => Status::Expired,
        Transition::Cancel => Status::Cancelled,
        Transition::Detach | Transition::Reattach => {
            // One guarded UPDATE, the same as a completed turn's in a batch.
            let mut batch = Batch::new();
            let detach = matches!(transition, Transition::Detach);
            let detached = detach_steps(&mut batch, db.backend(), scope, now, false, detach);
            let done = batch.run(tx, db.backend()).await?;
            return done[detached].distinct_texts();
        }
    };
    // Locked as read, in id order (see `lock_bundle`); on PostgreSQL a row a
    // claim changed meanwhile is read again and, no longer active, skipped.
    let rows: Vec<(String, String, String)> = sqlx::query_as(crate::db::sql(format!(
        "SELECT m.id, m.pending_id, m.metadata FROM task_session_messages m \
         WHERE m.{column} = $1 AND {} ORDER BY m.id{}",
        active("m"),
        db.backend().for_update()
    )))
    .bind(key)
    .fetch_all(&mut **tx)
    .await?;
    let mut changed: Vec<String> = Vec::new();
    for (id, pending_id, metadata) in rows {
        let value = serde_json::from_str(&metadata).unwrap_or(serde_json::Value::Null);
        let mut meta = ClarificationMetadata::from_json(&value);
        meta.status = status.into();
        write_metadata(tx, &id, &meta, now).await?;
        if !changed.contains(&pending_id) {
            changed.push(pending_id);
        }
    }
    Ok(changed)
}

/// The detach of a session's current turn, as steps of a batch, for a
/// batch that has just completed that turn at `now` (and so only if it
/// did). The returned step's rows are the changed rows' pending ids (a
/// bundle once per row).
pub fn detach_completed_steps(
    batch: &mut Batch,
    backend: Backend,
    session_id: &str,
    now: i64,
) -> usize {
    detach_steps(batch, backend, Scope::Session(session_id), now, true, true)
}

/// The detach (the agent no longer waits) of the active questions in
/// `scope` not yet detached, or with `detach` false their reattach, as
/// steps of a batch; with `just_completed`, only of a turn completed at
/// `now`.
fn detach_steps(
    batch: &mut Batch,
    backend: Backend,
    scope: Scope<'_>,
    now: i64,
    just_completed: bool,
    detach: bool,
) -> usize {
    let (column, key) = scope.column();
    if backend.shared() {
        // The rows are locked in id order first, as every write of them is.
        batch.push(
            format!(
                "SELECT m.id FROM task_session_messages m \
                 WHERE m.{column} = $1 AND {} ORDER BY m.id{}",
                active("m"),
                backend.for_update()
            ),
            vec![key.into()],
        );
    }
    batch.push(
        detach_sql(backend, column, just_completed, detach),
        vec![now.into(), key.into()],
    )
}

/// The UPDATE of [`detach_completed_steps`] (`$1` now, `$2` the session),
/// public so that `tests/query_plans.rs` can pin its plan.
#[must_use]
pub fn detach_completed_sql(backend: Backend) -> String {
    detach_sql(backend, "task_session_id", true, true)
}

fn detach_sql(backend: Backend, column: &str, just_completed: bool, detach: bool) -> String {
    let key = clarify_core::metadata_key::AGENT_DISCONNECTED;
    let unset = backend.metadata_flag_unset("m", key);
    let completed = if just_completed {
        "AND EXISTS (SELECT 1 FROM task_session_turns c \
         WHERE c.id = m.turn_id AND c.completed_at = $1)"
    } else {
        ""
    };
    format!(
        "UPDATE task_session_messages AS m SET metadata = {set}, updated_at = $1 \
         WHERE m.{column} = $2 AND {active} AND {not_yet} {completed} \
         RETURNING pending_id",
        active = active("m"),
        set = backend.metadata_set(key, if detach { "true" } else { "false" }),
        not_yet = if detach {
            unset
        } else {
            format!("NOT ({unset})")
        },
    )
}

/// The active bundles whose `expires_at` has come by `now`, the soonest
/// first, at most `limit` (the expiry sweep; answered from the partial
/// index of open, expiring questions).
///
/// # Errors
/// Database errors.
pub async fn due(db: &Db, now: i64, limit: i64) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(crate::db::sql(due_sql()))
        .bind(now)
        .bind(limit)
        .fetch_all(db.pool())
        .await?;
    Ok(rows.into_iter().map(|(id, _)| id).collect())
}

/// The query of [`due`] (`$1` now, `$2` the limit), public so that its
/// plan can be pinned (`tests/query_plans.rs`).
#[must_use]
pub fn due_sql() -> String {
    format!(
        "SELECT m.pending_id, MIN(m.clarification_expires_at) FROM task_session_messages m \
         WHERE m.clarification_expires_at > 0 AND m.clarification_expires_at <= $1 AND {} \
         GROUP BY m.pending_id ORDER BY 2 LIMIT $2",
        active("m")
    )
}
