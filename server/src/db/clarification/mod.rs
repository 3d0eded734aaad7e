//! Clarification bundles in the database: the active rule (D4, L2a), the
//! claim (P1) and the other transitions of the lifecycle.
//!
//! [`active`] is the only statement of "active" in the code base: the claim,
//! the pending projections and the list all build on it. The claim in
//! [`complete_active_bundle`] is the only claim mechanism (P1).

mod assign;
mod bundle;
mod claim;
mod marks;
mod restore;
mod transition;

use std::collections::HashSet;

use clarify_core::ClarificationMetadata;
use sqlx::AnyExecutor;

use super::batch::Batch;
use super::messages::CLARIFICATION_REQUEST;
use super::sessions::terminal_states_sql;
use super::{Backend, Db, Tx};

pub use assign::assign;
pub use bundle::{Bundle, BundleRow};
pub use claim::{Claim, Claiming, Delivery, claim_in, complete_active_bundle};
pub use marks::{Mark, finalize, finalize_steps, mark};
pub use restore::{Guard, delivery_pending, restore};
pub use transition::{
    Scope, Transition, detach_completed_sql, detach_completed_steps, due, due_sql, transition,
    transition_in,
};

/// D4 as a SQL condition on the message alias `m`: a pending (or
/// status-less) question of the session's current turn, in a session that
/// has not ended. Nothing else in the code base restates this.
#[must_use]
pub fn active(m: &str) -> String {
    format!(
        "{m}.type = '{CLARIFICATION_REQUEST}' \
         AND {m}.clarification_status IN ('', 'pending') \
         AND {m}.turn_id = (SELECT t.id FROM task_session_turns t \
             WHERE t.task_session_id = {m}.task_session_id \
             ORDER BY t.started_at DESC, t.created_at DESC, t.id DESC LIMIT 1) \
         AND EXISTS (SELECT 1 FROM task_sessions s \
             WHERE s.id = {m}.task_session_id AND s.state NOT IN {})",
        terminal_states_sql()
    )
}

const BUNDLE_SELECT: &str = "SELECT m.id, m.pending_id, m.task_session_id AS session_id, \
     CASE WHEN m.task_id <> '' THEN m.task_id ELSE COALESCE(s.task_id, '') END AS task_id, \
     m.turn_id, m.metadata, m.created_at, m.updated_at \
     FROM task_session_messages m LEFT JOIN task_sessions s ON s.id = m.task_session_id";

/// Reads a bundle by `pending_id` (step 1 of ResolveBundle); `None` when it
/// has no durable messages (A5).
///
/// # Errors
/// Database errors.
pub async fn load(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<Option<Bundle>> {
    let rows: Vec<BundleRow> = sqlx::query_as(crate::db::sql(format!(
        "{BUNDLE_SELECT} WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}'"
    )))
    .bind(pending_id)
    .fetch_all(db)
    .await?;
    Ok(Bundle::new(rows))
}

/// Reads several bundles in one query, by `pending_id`; those without
/// durable messages are absent from the map.
///
/// # Errors
/// Database errors.
pub async fn load_many(
    db: impl AnyExecutor<'_>,
    pending_ids: &[String],
) -> sqlx::Result<std::collections::HashMap<String, Bundle>> {
    if pending_ids.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    let mut query = sqlx::query_as(crate::db::sql(format!(
        "{BUNDLE_SELECT} WHERE m.pending_id IN ({}) AND m.type = '{CLARIFICATION_REQUEST}'",
        crate::db::placeholders(1, pending_ids.len())
    )));
    for id in pending_ids {
        query = query.bind(id);
    }
    let rows: Vec<BundleRow> = query.fetch_all(db).await?;
    let mut by_bundle: std::collections::HashMap<String, Vec<BundleRow>> =
        std::collections::HashMap::new();
    for row in rows {
        by_bundle
            .entry(row.pending_id.clone())
            .or_default()
            .push(row);
    }
    Ok(by_bundle
        .into_iter()
        .filter_map(|(id, rows)| Bundle::new(rows).map(|b| (id, b)))
        .collect())
}

/// Whether any question of the bundle is active (D4).
///
/// # Errors
/// Database errors.
pub async fn is_active(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<bool> {
    let found: Option<(String,)> = sqlx::query_as(crate::db::sql(format!(
        "SELECT m.id FROM task_session_messages m WHERE m.pending_id = $1 AND {} LIMIT 1",
        active("m")
    )))
    .bind(pending_id)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

/// The pending ids of a session's active bundles, each once, oldest first.
///
/// # Errors
/// Database errors.
pub async fn active_in_session(
    db: impl AnyExecutor<'_>,
    session_id: &str,
) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(crate::db::sql(active_in_session_sql()))
        .bind(session_id)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(p, _)| p).collect())
}

/// Which sessions of the given tasks have an active bundle (the
/// pending-action projection, T1/T2), in one query.
///
/// # Errors
/// Database errors.
pub async fn sessions_with_active(
    db: impl AnyExecutor<'_>,
    task_ids: &[String],
) -> sqlx::Result<HashSet<String>> {
    if task_ids.is_empty() {
        return Ok(HashSet::new());
    }
    let mut query = sqlx::query_as(crate::db::sql(sessions_with_active_sql(task_ids.len())));
    for id in task_ids {
        query = query.bind(id);
    }
    let rows: Vec<(String,)> = query.fetch_all(db).await?;
    Ok(rows.into_iter().map(|(s,)| s).collect())
}

/// The session's bundles claimed but not yet delivered, among them those
/// whose answers are kept for the agent to collect (pull delivery).
///
/// # Errors
/// Database errors.
pub async fn kept_for_pickup(tx: &mut Tx, session_id: &str) -> sqlx::Result<Vec<Bundle>> {
    let rows: Vec<(String,)> = sqlx::query_as(crate::db::sql(kept_for_pickup_sql()))
        .bind(session_id)
        .fetch_all(&mut **tx)
        .await?;
    let mut bundles = Vec::with_capacity(rows.len());
    for (pending_id,) in rows {
        bundles.extend(load(&mut **tx, &pending_id).await?);
    }
    Ok(bundles)
}

/// An active bundle of the session asking exactly these questions, if any
/// (an identical repeated request returns the same `pending_id`).
///
/// # Errors
/// Database errors.
pub async fn active_bundles_of_session(tx: &mut Tx, session_id: &str) -> sqlx::Result<Vec<Bundle>> {
    let mut bundles = Vec::new();
    for pending_id in active_in_session(&mut **tx, session_id).await? {
        if let Some(bundle) = load(&mut **tx, &pending_id).await? {
            bundles.push(bundle);
        }
    }
    Ok(bundles)
}

/// Locks a bundle's rows for the rest of the transaction, always in id
/// order: two writers touching the same bundle (a claim on one replica, a
/// cancel or a session expiry on another) then queue instead of
/// deadlocking, and the second one's statements see the first one's
/// commit. SQLite's `BEGIN IMMEDIATE` has already serialized the writers.
pub(super) async fn lock_bundle(tx: &mut Tx, db: &Db, pending_id: &str) -> sqlx::Result<()> {
    if !db.backend().shared() {
        return Ok(());
    }
    sqlx::query(crate::db::sql(lock_bundle_sql(db.backend())))
        .bind(pending_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// [`lock_bundle`]'s query (`$1` the bundle).
pub(super) fn lock_bundle_sql(backend: Backend) -> String {
    format!(
        "SELECT m.id FROM task_session_messages m \
         WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}' ORDER BY m.id{}",
        backend.for_update()
    )
}

const WRITE_METADATA: &str =
    "UPDATE task_session_messages SET metadata = $1, updated_at = $2 WHERE id = $3";

/// Writes `meta` to message `id`; returns the JSON written.
pub(super) async fn write_metadata(
    tx: &mut Tx,
    id: &str,
    meta: &ClarificationMetadata,
    now: i64,
) -> sqlx::Result<String> {
    let metadata = meta.to_json().to_string();
    sqlx::query(WRITE_METADATA)
        .bind(&metadata)
        .bind(now)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(metadata)
}

/// [`write_metadata`] as a step of a batch; returns the JSON it writes.
pub(super) fn write_metadata_step(
    batch: &mut Batch,
    id: &str,
    meta: &ClarificationMetadata,
    now: i64,
) -> String {
    let metadata = meta.to_json().to_string();
    batch.push(
        WRITE_METADATA.to_owned(),
        vec![metadata.as_str().into(), now.into(), id.into()],
    );
    metadata
}

/// [`active_in_session`]'s query (`$1`: the session), public so that
/// `tests/query_plans.rs` can pin its plan to the session's open-questions
/// index.
#[must_use]
pub fn active_in_session_sql() -> String {
    format!(
        "SELECT m.pending_id, MIN(m.created_at) FROM task_session_messages m \
         WHERE m.task_session_id = $1 AND {} GROUP BY m.pending_id ORDER BY 2, 1",
        active("m")
    )
}

/// [`sessions_with_active`]'s query for `tasks` task ids.
#[must_use]
pub fn sessions_with_active_sql(tasks: usize) -> String {
    format!(
        "SELECT DISTINCT m.task_session_id FROM task_session_messages m \
         JOIN task_sessions ss ON ss.id = m.task_session_id \
         WHERE ss.task_id IN ({}) AND {}",
        crate::db::placeholders(1, tasks),
        active("m")
    )
}

/// [`kept_for_pickup`]'s query (`$1`: the session).
#[must_use]
pub fn kept_for_pickup_sql() -> String {
    format!(
        "SELECT DISTINCT m.pending_id FROM task_session_messages m \
         WHERE m.task_session_id = $1 AND m.type = '{CLARIFICATION_REQUEST}' \
         AND m.clarification_delivery_pending = 1"
    )
}
