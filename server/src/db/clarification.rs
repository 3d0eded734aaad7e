//! Clarification bundles in the database: the active rule (D4, L2a), the
//! claim (P1) and the other transitions of the lifecycle.
//!
//! [`active`] is the only statement of "active" in the code base: the claim,
//! the pending projections and the list all build on it. The claim in
//! [`complete_active_bundle`] is the only claim mechanism (P1).

use std::collections::HashSet;

use clarify_core::{ClarificationMetadata, Outcome, Status, StoredMessage, sort_d2};
use sqlx::{AnyExecutor, FromRow};

use super::messages::CLARIFICATION_REQUEST;
use super::sessions::terminal_states_sql;
use super::{Db, Tx};

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

/// One stored question of a bundle, with where it lives (M5).
#[derive(Debug, Clone, FromRow)]
pub struct BundleRow {
    /// The message id.
    pub id: String,
    /// The session that asked.
    pub session_id: String,
    /// The task, from the message or else from its session (M5); `""` when
    /// neither has one (M5a).
    pub task_id: String,
    /// The turn it was asked in.
    pub turn_id: String,
    /// Raw metadata JSON.
    pub metadata: String,
    /// When it was written.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

impl BundleRow {
    /// The core view of this row.
    #[must_use]
    pub fn stored(&self) -> StoredMessage {
        let value = serde_json::from_str(&self.metadata).unwrap_or(serde_json::Value::Null);
        StoredMessage {
            id: self.id.clone(),
            created_at: self.created_at,
            metadata: ClarificationMetadata::from_json(&value),
        }
    }
}

/// A bundle's rows in D2 order.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The rows, D2-ordered.
    pub rows: Vec<BundleRow>,
    /// Their core view, in the same order.
    pub messages: Vec<StoredMessage>,
}

impl Bundle {
    fn new(rows: Vec<BundleRow>) -> Option<Self> {
        if rows.is_empty() {
            return None;
        }
        let mut pairs: Vec<(StoredMessage, BundleRow)> =
            rows.into_iter().map(|r| (r.stored(), r)).collect();
        let mut messages: Vec<StoredMessage> = pairs.iter().map(|(m, _)| m.clone()).collect();
        sort_d2(&mut messages);
        pairs.sort_by_key(|(m, _)| messages.iter().position(|x| x.id == m.id));
        Some(Self {
            rows: pairs.into_iter().map(|(_, r)| r).collect(),
            messages,
        })
    }

    /// The session that asked.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.rows[0].session_id
    }

    /// The task it blocks (M5), `""` when unresolvable (M5a).
    #[must_use]
    pub fn task_id(&self) -> &str {
        self.rows
            .iter()
            .map(|r| r.task_id.as_str())
            .find(|t| !t.is_empty())
            .unwrap_or("")
    }

    /// The newest `updated_at` of its rows: when it was resolved, once it is.
    #[must_use]
    pub fn updated_at(&self) -> i64 {
        self.rows
            .iter()
            .map(|r| r.updated_at)
            .max()
            .unwrap_or_default()
    }

    /// Its earliest `created_at` (D1).
    #[must_use]
    pub fn created_at(&self) -> i64 {
        self.rows
            .iter()
            .map(|r| r.created_at)
            .min()
            .unwrap_or_default()
    }
}

const BUNDLE_SELECT: &str = "SELECT m.id, m.task_session_id AS session_id, \
     CASE WHEN m.task_id <> '' THEN m.task_id ELSE COALESCE(s.task_id, '') END AS task_id, \
     m.turn_id, m.metadata, m.created_at, m.updated_at \
     FROM task_session_messages m LEFT JOIN task_sessions s ON s.id = m.task_session_id";

/// Reads a bundle by `pending_id` (step 1 of ResolveBundle); `None` when it
/// has no durable messages (A5).
///
/// # Errors
/// Database errors.
pub async fn load(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<Option<Bundle>> {
    let rows: Vec<BundleRow> = sqlx::query_as(super::sql(format!(
        "{BUNDLE_SELECT} WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}'"
    )))
    .bind(pending_id)
    .fetch_all(db)
    .await?;
    Ok(Bundle::new(rows))
}

/// Whether any question of the bundle is active (D4).
///
/// # Errors
/// Database errors.
pub async fn is_active(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<bool> {
    let found: Option<(String,)> = sqlx::query_as(super::sql(format!(
        "SELECT m.id FROM task_session_messages m WHERE m.pending_id = $1 AND {} LIMIT 1",
        active("m")
    )))
    .bind(pending_id)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

/// The pending ids of a session's active bundles, each once.
///
/// # Errors
/// Database errors.
pub async fn active_in_session(
    db: impl AnyExecutor<'_>,
    session_id: &str,
) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(super::sql(format!(
        "SELECT DISTINCT m.pending_id FROM task_session_messages m \
         WHERE m.task_session_id = $1 AND {}",
        active("m")
    )))
    .bind(session_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(p,)| p).collect())
}

/// Which of the given sessions have an active bundle (the pending-action
/// projection, T1/T2).
///
/// # Errors
/// Database errors.
pub async fn sessions_with_active(
    db: impl AnyExecutor<'_>,
    task_id: &str,
) -> sqlx::Result<HashSet<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(super::sql(format!(
        "SELECT DISTINCT m.task_session_id FROM task_session_messages m \
         JOIN task_sessions ss ON ss.id = m.task_session_id \
         WHERE ss.task_id = $1 AND {}",
        active("m")
    )))
    .bind(task_id)
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(s,)| s).collect())
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

/// The claim (P1): in one transaction, one guarded UPDATE moves the bundle's
/// active rows to `responding`, then each claimed row gets its terminal
/// status, its answer (on `answered`, P1a) and `response_delivery_pending`.
///
/// `Some(claim)` when this caller won, `None` when nothing was claimable
/// (someone else won, or the bundle is not active). No activeness pre-check
/// happens anywhere else (P2).
///
/// # Errors
/// Database errors, and a claimed row without a `question_id` (R4a).
pub async fn complete_active_bundle(
    db: &Db,
    pending_id: &str,
    outcome: &Outcome,
    now: i64,
) -> sqlx::Result<Option<Claim>> {
    let mut tx = db.begin_write().await?;
    lock_bundle(&mut tx, db, pending_id).await?;
    let responding = db.backend().metadata_set("status", "\"responding\"");
    let claimed: Vec<BundleRow> = sqlx::query_as(super::sql(format!(
        "UPDATE task_session_messages AS m SET metadata = {responding}, updated_at = $2 \
         WHERE m.pending_id = $1 AND {active} \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages b WHERE b.pending_id = $1 \
             AND b.type = '{CLARIFICATION_REQUEST}' AND b.clarification_question_id = '') \
         RETURNING id, task_session_id AS session_id, task_id, turn_id, metadata, \
             created_at, updated_at",
        active = active("m"),
    )))
    .bind(pending_id)
    .bind(now)
    .fetch_all(&mut *tx)
    .await?;
    if claimed.is_empty() {
        tx.rollback().await?;
        return Ok(None);
    }

    let status = outcome.status();
    let mut messages = Vec::with_capacity(claimed.len());
    for row in &claimed {
        let mut message = row.stored();
        let meta = &mut message.metadata;
        if meta.question_id.is_empty() {
            return Err(sqlx::Error::Protocol(format!(
                "clarification message {} is missing question_id",
                row.id
            )));
        }
        meta.status = status.into();
        meta.response = outcome.answer_for(&meta.question_id).cloned();
        meta.response_delivery_pending = true;
        write_metadata(&mut tx, &row.id, meta, now).await?;
        messages.push(message);
    }
    tx.commit().await?;
    Ok(Some(Claim {
        messages,
        token: now,
    }))
}

/// A won claim, still to be delivered.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The claimed rows as now stored.
    pub messages: Vec<StoredMessage>,
    /// The `updated_at` the claim wrote: the delivery's later writes apply
    /// only while the rows still carry it, so once reconciliation has taken
    /// the claim back (its replica looked dead) they change nothing.
    pub token: i64,
}

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
    })
    .await
}

/// Marks a claimed bundle's delivery as done.
///
/// # Errors
/// Database errors.
pub async fn finalize(db: &Db, pending_id: &str, now: i64, guard: Guard) -> sqlx::Result<bool> {
    rewrite_delivery_pending(db, pending_id, now, guard, |meta| {
        meta.response_delivery_pending = false;
        meta.resume_attempted = false;
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
    lock_bundle(&mut tx, db, pending_id).await?;
    let bundle = load(&mut *tx, pending_id).await?;
    let mut changed = false;
    for (row, mut message) in bundle
        .iter()
        .flat_map(|b| b.rows.iter().zip(b.messages.clone()))
    {
        if !message.metadata.response_delivery_pending || !guard.admits(row.updated_at) {
            continue;
        }
        change(&mut message.metadata);
        write_metadata(&mut tx, &row.id, &message.metadata, now).await?;
        changed = true;
    }
    tx.commit().await?;
    Ok(changed)
}

/// Every bundle left claimed but undelivered, e.g. by a crash (R6).
///
/// # Errors
/// Database errors.
pub async fn delivery_pending(db: impl AnyExecutor<'_>) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String,)> = sqlx::query_as(super::sql(format!(
        "SELECT DISTINCT m.pending_id FROM task_session_messages m \
         WHERE m.type = '{CLARIFICATION_REQUEST}' AND m.clarification_delivery_pending = 1"
    )))
    .fetch_all(db)
    .await?;
    Ok(rows.into_iter().map(|(p,)| p).collect())
}

/// Records that a resume dispatch is about to start for the claim carrying
/// `token`, so a crash during it is not answered with a second resume (at
/// most once). `false`: the claim is no longer this delivery's. The rows
/// carry `now` as their token afterwards.
///
/// # Errors
/// Database errors.
pub async fn mark_resume_attempted(
    db: &Db,
    pending_id: &str,
    now: i64,
    token: i64,
) -> sqlx::Result<bool> {
    rewrite_delivery_pending(db, pending_id, now, Guard::Claim(token), |meta| {
        meta.resume_attempted = true;
    })
    .await
}

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

/// Locks a bundle's rows for the rest of the transaction, always in id
/// order: two writers touching the same bundle (a claim on one replica, a
/// cancel or a session expiry on another) then queue instead of
/// deadlocking, and the second one's statements see the first one's
/// commit. SQLite's `BEGIN IMMEDIATE` has already serialized the writers.
async fn lock_bundle(tx: &mut Tx, db: &Db, pending_id: &str) -> sqlx::Result<()> {
    if !db.backend().shared() {
        return Ok(());
    }
    sqlx::query(super::sql(format!(
        "SELECT m.id FROM task_session_messages m \
         WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}' ORDER BY m.id{}",
        db.backend().for_update()
    )))
    .bind(pending_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A transition of active questions that is not a resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The agent stopped waiting; the bundle stays active and answerable.
    Detach,
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
    let (column, key) = scope.column();
    // Locked as read, in id order (see `lock_bundle`); on PostgreSQL a row a
    // claim changed meanwhile is read again and, no longer active, skipped.
    let rows: Vec<(String, String, String)> = sqlx::query_as(super::sql(format!(
        "SELECT m.id, m.pending_id, m.metadata FROM task_session_messages m \
         WHERE m.{column} = $1 AND {} ORDER BY m.id{}",
        active("m"),
        db.backend().for_update()
    )))
    .bind(key)
    .fetch_all(&mut *tx)
    .await?;
    let mut changed: Vec<String> = Vec::new();
    for (id, pending_id, metadata) in rows {
        let value = serde_json::from_str(&metadata).unwrap_or(serde_json::Value::Null);
        let mut meta = ClarificationMetadata::from_json(&value);
        match transition {
            Transition::Detach if meta.agent_disconnected => continue,
            Transition::Detach => meta.agent_disconnected = true,
            Transition::Expire => meta.status = Status::Expired.into(),
            Transition::Cancel => meta.status = Status::Cancelled.into(),
        }
        write_metadata(&mut tx, &id, &meta, now).await?;
        if !changed.contains(&pending_id) {
            changed.push(pending_id);
        }
    }
    tx.commit().await?;
    Ok(changed)
}

async fn write_metadata(
    tx: &mut Tx,
    id: &str,
    meta: &ClarificationMetadata,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query("UPDATE task_session_messages SET metadata = $1, updated_at = $2 WHERE id = $3")
        .bind(meta.to_json().to_string())
        .bind(now)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
