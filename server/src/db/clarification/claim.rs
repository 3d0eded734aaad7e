//! The one claim (P1) and what follows it: a delivery finalized, a claim
//! restored (R7, R6), a resume marked as attempted; each rewrite fenced by
//! the claim's token.

use clarify_core::delivery::{Facts, Route, route};
use clarify_core::{AnsweredBy, ClarificationMetadata, Outcome, Status, StoredMessage};
use sqlx::AnyExecutor;

use super::{
    BundleRow, CLARIFICATION_REQUEST, active, load, lock_bundle, write_metadata,
    write_metadata_step,
};
use crate::db::batch::Batch;
use crate::db::messages::Message;
use crate::db::{Db, Tx};

/// The claim (P1): in one transaction, one guarded UPDATE moves the bundle's
/// active rows to `responding`, then each claimed row gets its terminal
/// status, its answer (on `answered`, P1a), who gave it (`answered_by`,
/// so a winner without provenance cannot exist) and
/// `response_delivery_pending`.
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
    claiming: Claiming<'_>,
) -> sqlx::Result<Option<Claim>> {
    let mut tx = db.begin_write().await?;
    let claimed = claim_in(&mut tx, db, pending_id, claiming, Batch::new()).await?;
    if claimed.is_some() {
        tx.commit().await?;
    } else {
        tx.rollback().await?;
    }
    Ok(claimed)
}

/// What a claim writes on the rows it wins.
#[derive(Debug, Clone, Copy)]
pub struct Claiming<'a> {
    /// What was answered.
    pub outcome: &'a Outcome,
    /// Who answered it.
    pub by: &'a AnsweredBy,
    /// When: also the claim's token.
    pub now: i64,
    /// Whether the delivery is still to come.
    pub delivery: Delivery,
}

/// Whether a claim's delivery is still to come, or is made by the very
/// transaction that claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered after the claim commits: the rows say so
    /// (`response_delivery_pending`) until the delivery finalizes them, or
    /// reconciliation does (R6).
    Pending,
    /// Delivered after the claim commits by a resume dispatch, which may
    /// start as soon as it does: the claim's own writes mark the resume
    /// attempted, so after a crash the claim is kept, never resent (R6),
    /// without a transaction of its own before the dispatch (issue 31).
    /// A bundle its agent polls as a task is never resumed: its claim is
    /// `Pending`.
    Resume,
    /// Handed to the agent blocked on it as the claim commits: the rows are
    /// final at once, and there is nothing for R6 to find.
    Final,
}

/// [`complete_active_bundle`] inside `tx`, which the caller commits (or
/// drops, undoing the claim). `None` when nothing was claimable. A won
/// claim runs `also` in the same trip as its rows' final writes (issue 17),
/// only then.
///
/// # Errors
/// Database errors, and a claimed row without a `question_id` (R4a).
pub async fn claim_in(
    tx: &mut Tx,
    db: &Db,
    pending_id: &str,
    claiming: Claiming<'_>,
    also: Batch,
) -> sqlx::Result<Option<Claim>> {
    let Claiming {
        outcome,
        by,
        now,
        delivery,
    } = claiming;
    lock_bundle(tx, db, pending_id).await?;
    let claim = db
        .backend()
        .metadata_set(clarify_core::metadata_key::STATUS, "\"responding\"");
    let claimed: Vec<ClaimedRow> = sqlx::query_as(crate::db::sql(format!(
        "UPDATE task_session_messages AS m SET metadata = {claim}, updated_at = $2 \
         WHERE m.pending_id = $1 AND {active} \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages b WHERE b.pending_id = $1 \
             AND b.type = '{CLARIFICATION_REQUEST}' AND b.clarification_question_id = '') \
         RETURNING id, pending_id, task_session_id AS session_id, task_id, turn_id, metadata, \
             created_at, updated_at, type AS kind, content, \
             CAST(CASE WHEN {polled} THEN 1 ELSE 0 END AS BIGINT) AS polled",
        active = active("m"),
        polled = crate::db::mcp_tasks::polled_sql("$1"),
    )))
    .bind(pending_id)
    .bind(now)
    .fetch_all(&mut **tx)
    .await?;
    if claimed.is_empty() {
        return Ok(None);
    }
    // Read under the claim's lock, so newer than any read of the bundle
    // before it: an agent that stopped waiting (a cancelled call or task)
    // or polls a task is never handed the answer live (A5a, R7).
    let polled = claimed.iter().any(|c| c.polled != 0);
    let parsed: Vec<_> = claimed.into_iter().map(|c| (c.row.stored(), c)).collect();
    let detached = parsed
        .iter()
        .any(|(message, _)| message.metadata.agent_disconnected);
    // The caller's delivery was what it read before the claim; the route
    // is decided again from what the claim reads under its lock (the
    // delivery machine's `Claim` row, clarify_core::delivery).
    let facts = Facts {
        polled,
        attached: delivery == Delivery::Final && !detached,
        declined: matches!(outcome, Outcome::Rejected { .. }),
        has_target: delivery == Delivery::Resume,
    };
    let (delivery, also) = match (route(facts), delivery) {
        (Route::Live, _) => (Delivery::Final, also),
        (Route::Resume, _) => (Delivery::Resume, also),
        // Only a hand-over to a blocked agent rides on the claim's trip.
        (_, Delivery::Final) => (Delivery::Pending, Batch::new()),
        _ => (Delivery::Pending, also),
    };

    let status = outcome.status();
    let mut writes = Batch::new();
    let mut messages = Vec::with_capacity(parsed.len());
    let mut rows = Vec::with_capacity(parsed.len());
    for (
        mut message,
        ClaimedRow {
            row, kind, content, ..
        },
    ) in parsed
    {
        let meta = &mut message.metadata;
        if meta.question_id.is_empty() {
            return Err(sqlx::Error::Protocol(format!(
                "clarification message {} is missing question_id",
                row.id
            )));
        }
        meta.status = status.into();
        meta.response = outcome.answer_for(&meta.question_id).cloned();
        meta.response_delivery_pending = delivery != Delivery::Final;
        meta.resume_attempted = delivery == Delivery::Resume;
        meta.answered_by = Some(by.clone());
        let metadata = write_metadata_step(&mut writes, &row.id, meta, now);
        messages.push(message);
        rows.push(Message {
            id: row.id,
            task_session_id: row.session_id,
            task_id: row.task_id,
            turn_id: row.turn_id,
            kind,
            content,
            metadata,
            created_at: row.created_at,
            updated_at: now,
            reject_reason: String::new(),
        });
    }
    let reason = match outcome {
        Outcome::Rejected { reason } => {
            crate::db::declines::record_step(&mut writes, pending_id, reason, now);
            reason.as_str()
        }
        Outcome::Answered(_) => "",
    };
    for row in &mut rows {
        reason.clone_into(&mut row.reject_reason);
    }
    writes.append(also);
    writes.run(tx, db.backend()).await?;
    // In transcript order, as a read of the bundle returns them.
    rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(Some(Claim {
        messages,
        rows,
        token: now,
        delivery,
        detached,
        polled,
    }))
}

/// A row as the claim's UPDATE returns it.
#[derive(Debug)]
struct ClaimedRow {
    row: BundleRow,
    kind: String,
    content: String,
    /// 1 when the bundle is a task its agent polls ([`Claim::polled`]).
    polled: i64,
}

impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for ClaimedRow {
    fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
        use sqlx::Row as _;
        Ok(Self {
            row: BundleRow::from_row(row)?,
            kind: row.try_get("kind")?,
            content: row.try_get("content")?,
            polled: row.try_get("polled")?,
        })
    }
}

/// A won claim, still to be delivered.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The claimed rows as now stored.
    pub messages: Vec<StoredMessage>,
    /// The same rows as messages, as a read would return them once the
    /// claim commits (what the events announcing it carry, without that
    /// read).
    pub rows: Vec<Message>,
    /// The `updated_at` the claim wrote: the delivery's later writes apply
    /// only while the rows still carry it, so once reconciliation has taken
    /// the claim back (its replica looked dead) they change nothing.
    pub token: i64,
    /// As written: `Final` only when asked for and the agent still blocks
    /// on it (neither detached nor polling a task), the caller's `also`
    /// run only then; `Resume` only when asked for and nobody polls it.
    pub delivery: Delivery,
    /// The agent had stopped waiting (its rows say so).
    pub detached: bool,
    /// The bundle is an MCP task its agent still polls: its answer is kept
    /// for that poll (pull delivery).
    pub polled: bool,
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
