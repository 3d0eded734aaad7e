//! The one claim (P1): one guarded UPDATE that, when the bundle is as the
//! answerer read it, writes each row's final state at once (issue 50).

use clarify_core::delivery::{Facts, Route, route};
use clarify_core::{AnsweredBy, ClarificationMetadata, Outcome, StoredMessage};

use super::{
    Bundle, BundleRow, CLARIFICATION_REQUEST, active, lock_bundle_sql, write_metadata_step,
};
use crate::db::batch::{Batch, Value};
use crate::db::messages::Message;
use crate::db::{Db, Tx};

/// The claim (P1): in one transaction, one guarded UPDATE takes the
/// bundle's active rows, and each claimed row gets its terminal status, its
/// answer (on `answered`, P1a), who gave it (`answered_by`, so a winner
/// without provenance cannot exist) and `response_delivery_pending`.
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
    /// The bundle as the answerer read it before the claim: what the claim
    /// writes is worked out from it, and written only on rows still as
    /// read (issue 50).
    pub read: &'a Bundle,
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
/// The UPDATE writes on each row what the claim would write were the row
/// as `read` and the bundle not polled as a task; on any other row it
/// writes `responding`, and then every claimed row is written again from
/// what the UPDATE returned, as read under the claim's lock. Either way
/// the route is decided from what the claim reads under its lock.
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
        delivery: asked,
        read,
    } = claiming;
    let declined = matches!(outcome, Outcome::Rejected { .. });
    // Worked out from the bundle as read: what each row becomes.
    let (expected, _) = decide(read.detached(), false, declined, asked);
    let foreseen: Vec<(&str, &str, String)> = read
        .rows
        .iter()
        .zip(&read.messages)
        .filter(|(_, message)| !message.metadata.question_id.is_empty())
        .map(|(row, message)| {
            let mut meta = message.metadata.clone();
            finish(&mut meta, outcome, by, expected);
            (
                row.id.as_str(),
                row.metadata.as_str(),
                meta.to_json().to_string(),
            )
        })
        .collect();

    let mut trip = Batch::new();
    // The lock and the UPDATE in one trip (issue 50), still two
    // statements: the UPDATE's snapshot is taken once the lock is held, so
    // it reads what a writer that held the bundle before it committed.
    if db.backend().shared() {
        trip.push(lock_bundle_sql(db.backend()), vec![pending_id.into()]);
    }
    let update = trip.push(
        claim_sql(db, foreseen.len()),
        [pending_id.into(), now.into()]
            .into_iter()
            .chain(foreseen.iter().flat_map(|(id, before, after)| {
                [
                    Value::from(*id),
                    Value::from(*before),
                    Value::from(after.as_str()),
                ]
            }))
            .collect(),
    );
    let mut done = trip.run(tx, db.backend()).await?;
    let claimed = std::mem::take(&mut done[update].rows)
        .iter()
        .map(<ClaimedRow as sqlx::FromRow<_>>::from_row)
        .collect::<sqlx::Result<Vec<_>>>()?;
    if claimed.is_empty() {
        return Ok(None);
    }
    // Read under the claim's lock, so newer than any read of the bundle
    // before it: an agent that stopped waiting (a cancelled call or task)
    // or polls a task is never handed the answer live (A5a, R7).
    let polled = claimed.iter().any(|c| c.polled != 0);
    let written_at_once = claimed.len() == foreseen.len()
        && claimed.iter().all(|c| {
            foreseen
                .iter()
                .any(|(id, _, after)| *id == c.row.id && *after == c.row.metadata)
        });
    let parsed: Vec<_> = claimed.into_iter().map(|c| (c.row.stored(), c)).collect();
    let detached = parsed
        .iter()
        .any(|(message, _)| message.metadata.agent_disconnected);
    let (delivery, keeps_also) = decide(detached, polled, declined, asked);
    let also = if keeps_also { also } else { Batch::new() };
    // The rows the UPDATE did not write as they end, or not as the route
    // now decided has them: each written again, whole.
    let rewrite = !(written_at_once && delivery == expected);

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
        if message.metadata.question_id.is_empty() {
            return Err(sqlx::Error::Protocol(format!(
                "clarification message {} is missing question_id",
                row.id
            )));
        }
        let metadata = if rewrite {
            finish(&mut message.metadata, outcome, by, delivery);
            write_metadata_step(&mut writes, &row.id, &message.metadata, now)
        } else {
            row.metadata
        };
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
    if !writes.is_empty() {
        writes.run(tx, db.backend()).await?;
    }
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

/// The claim's UPDATE (`$1` the bundle, `$2` now, then per foreseen row
/// its id, its metadata as read and its metadata as claimed).
fn claim_sql(db: &Db, foreseen: usize) -> String {
    let taken = db
        .backend()
        .metadata_set(clarify_core::metadata_key::STATUS, "\"responding\"");
    let polled = crate::db::mcp_tasks::polled_sql("$1");
    let at_once: String = (0..foreseen)
        .map(|n| {
            let (id, before, after) = (3 * n + 3, 3 * n + 4, 3 * n + 5);
            format!(" WHEN m.id = ${id} AND m.metadata = ${before} THEN ${after}")
        })
        .collect();
    format!(
        "UPDATE task_session_messages AS m SET \
         metadata = CASE WHEN {polled} THEN {taken}{at_once} ELSE {taken} END, \
         updated_at = $2 \
         WHERE m.pending_id = $1 AND {active} \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages b WHERE b.pending_id = $1 \
             AND b.type = '{CLARIFICATION_REQUEST}' AND b.clarification_question_id = '') \
         RETURNING id, pending_id, task_session_id AS session_id, task_id, turn_id, metadata, \
             created_at, updated_at, type AS kind, content, \
             CAST(CASE WHEN {polled} THEN 1 ELSE 0 END AS BIGINT) AS polled",
        active = active("m"),
    )
}

/// The delivery a claim makes, and whether the caller's `also` rides on
/// its trip, decided by the delivery machine's `Claim` row
/// (clarify_core::delivery) from the facts `asked` for and read.
fn decide(detached: bool, polled: bool, declined: bool, asked: Delivery) -> (Delivery, bool) {
    let facts = Facts {
        polled,
        attached: asked == Delivery::Final && !detached,
        declined,
        has_target: asked == Delivery::Resume,
    };
    match (route(facts), asked) {
        (Route::Live, _) => (Delivery::Final, true),
        (Route::Resume, _) => (Delivery::Resume, true),
        // Only a hand-over to a blocked agent rides on the claim's trip.
        (_, Delivery::Final) => (Delivery::Pending, false),
        _ => (Delivery::Pending, true),
    }
}

/// What a won claim writes on a row's metadata.
fn finish(
    meta: &mut ClarificationMetadata,
    outcome: &Outcome,
    by: &AnsweredBy,
    delivery: Delivery,
) {
    meta.status = outcome.status().into();
    meta.response = outcome.answer_for(&meta.question_id).cloned();
    meta.response_delivery_pending = delivery != Delivery::Final;
    meta.resume_attempted = delivery == Delivery::Resume;
    meta.answered_by = Some(by.clone());
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
