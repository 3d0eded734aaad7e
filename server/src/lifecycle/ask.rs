//! Asking: a new bundle on the session's current turn (A6), or the
//! identical active one again; the agent attached from the start when it
//! will block on the answer.

use clarify_core::stored::bundle_questions;
use clarify_core::{
    EventKind, NewBundle, PendingId, SessionId, SessionState, Status, validate_new_bundle,
};
use std::time::Duration;

use serde::Serialize;

use super::{Asking, Error, Result};
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Bundle};
use crate::db::messages::{self, CLARIFICATION_REQUEST, Message};
use crate::db::{mcp_tasks, sessions, turns};
use crate::ids::new_id;
use crate::waiters::Waiting;

/// What `create_bundle` did.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    /// The bundle's id.
    pub pending_id: PendingId,
    /// `false` when an identical active request already existed.
    pub created: bool,
}

impl Asking {
    /// Creates a bundle on `session_id`'s current turn (starting one if the
    /// session has none open) and puts the session in `WAITING_FOR_INPUT`.
    /// An identical active request returns the existing `pending_id`.
    /// `attach`: the agent is about to poll for the answer, so it counts as
    /// attached (for [`crate::waiters::GRACE`]) from the moment the bundle exists.
    ///
    /// # Errors
    /// 400 for an invalid bundle, 404 for an unknown session, 409 for an
    /// ended one.
    pub async fn create_bundle(
        &self,
        session_id: &SessionId,
        new: &NewBundle,
        attach: bool,
        expires_in: Option<Duration>,
    ) -> Result<Created> {
        let session_id = session_id.as_str();
        let pending_id = new_id();
        if attach {
            self.shared.waiters.touch(&pending_id);
        }
        let created = self
            .create_bundle_as(session_id, new, pending_id, Asker::of(attach), expires_in)
            .await?;
        if attach && !created.created {
            self.shared.waiters.touch(&created.pending_id);
        }
        Ok(created)
    }

    /// Creates a bundle for an agent that will block on it: the waiter is
    /// registered before the bundle exists, so an answer given the instant
    /// it is stored already finds the agent attached.
    ///
    /// # Errors
    /// As [`Asking::create_bundle`].
    pub async fn create_attached(
        &self,
        session_id: &SessionId,
        new: &NewBundle,
        expires_in: Option<Duration>,
    ) -> Result<(Created, Waiting)> {
        let session_id = session_id.as_str();
        let pending_id = new_id();
        let waiting = self.shared.waiters.wait(&pending_id);
        let created = self
            .create_bundle_as(
                session_id,
                new,
                pending_id.clone(),
                Asker::Attached,
                expires_in,
            )
            .await?;
        let waiting = if created.pending_id == pending_id {
            waiting
        } else {
            // An identical request was already active: wait on that one,
            // attached again if the agent had detached from it.
            // Read first: a retried ask is common, a detach between the
            // two rare, and a write would queue on SQLite's one writer.
            let waiting = self.shared.waiters.wait(&created.pending_id);
            let existing = repo::load(self.shared.db.pool(), &created.pending_id).await?;
            if existing.is_some_and(|b| b.detached()) {
                self.shared.reattach(&created.pending_id).await?;
            }
            waiting
        };
        Ok((created, waiting))
    }

    /// Creates a bundle for an agent that will poll it as an MCP task
    /// (issue 30 item 3): the task is recorded in the transaction that
    /// stores the bundle, so no answer ever finds the bundle without it.
    ///
    /// # Errors
    /// As [`Asking::create_bundle`].
    pub async fn create_task(
        &self,
        session_id: &SessionId,
        new: &NewBundle,
        expires_in: Option<Duration>,
    ) -> Result<Created> {
        self.create_bundle_as(session_id.as_str(), new, new_id(), Asker::Task, expires_in)
            .await
    }

    async fn create_bundle_as(
        &self,
        session_id: &str,
        new: &NewBundle,
        pending_id: String,
        asker: Asker,
        expires_in: Option<Duration>,
    ) -> Result<Created> {
        let spec = validate_new_bundle(new).map_err(|e| Error::Invalid(e.to_string()))?;
        let now = now_micros();
        let expires_at = self.expires_at(now, expires_in);
        // Read outside the write: SQLite's one writer never waits on it.
        let open = self.open_questions(session_id).await?;
        let mut tx = self.shared.db.begin_write().await?;
        let session = sessions::lock(&mut tx, self.shared.db.backend(), session_id).await?;
        // A refusal read from the writer may rest on a unit of the same
        // group: told only once that group is on disk (a rollback waits).
        let Some(session) = session else {
            tx.rollback().await?;
            return Err(Error::NotFound("session"));
        };
        if session.state.is_terminal() {
            tx.rollback().await?;
            return Err(Error::Conflict("session has ended"));
        }
        // The same question again: the active one, or one whose answer is
        // kept for this agent (pull delivery), which its wait then collects.
        let mut candidates = repo::active_bundles_of_session(&mut tx, session_id).await?;
        candidates.extend(
            repo::kept_for_pickup(&mut tx, session_id)
                .await?
                .into_iter()
                .filter(Bundle::awaits_pickup),
        );
        let existing = candidates
            .into_iter()
            .find(|bundle| {
                bundle_questions(&bundle.messages) == spec.questions
                    && bundle.messages[0].metadata.context == spec.context
                    && bundle.messages[0].metadata.tool_call == spec.tool_call
            })
            .map(|bundle| bundle.pending_id().to_owned());
        let mut spent = None;
        let (pending_id, added) = match existing {
            Some(existing) => (existing, Vec::new()),
            None => {
                if let Some(Err(refused)) =
                    open.as_ref().map(|o| self.may_ask(o, spec.questions.len()))
                {
                    tx.rollback().await?;
                    return Err(refused);
                }
                // Taken: given back if the bundle is never stored.
                spent = self
                    .asks
                    .as_deref()
                    .zip(open.as_ref())
                    .map(|(rate, o)| Spent {
                        rate,
                        user: &o.user,
                        kept: false,
                    });
                let added =
                    insert_bundle(&mut tx, &session, &spec, &pending_id, now, expires_at).await?;
                sessions::transition(
                    &mut tx,
                    session_id,
                    &non_terminal(),
                    SessionState::WaitingForInput,
                    now,
                )
                .await?;
                (pending_id, added)
            }
        };
        match asker {
            // In the same transaction: no replica ever sees the bundle
            // without its agent attached.
            Asker::Attached => self.shared.cluster.attach(&mut *tx, &pending_id).await?,
            Asker::Task => mcp_tasks::ask(&mut tx, &pending_id, session_id, now).await?,
            Asker::Later => {}
        }
        tx.commit().await?;
        if let Some(spent) = &mut spent {
            spent.kept = true;
        }
        let created = !added.is_empty();
        if created {
            let kind = if spec.tool_call.is_some() {
                "approval"
            } else {
                "question"
            };
            self.shared.measure.asked(kind);
            // Published only once durable, so no browser sees a question
            // that a failed commit never stored.
            self.shared
                .publish_messages(EventKind::MessageAdded, session_id, &added)
                .await?;
            self.shared
                .publish_session(session_id, &session.task_id)
                .await;
        }
        Ok(Created {
            pending_id: pending_id.into(),
            created,
        })
    }
}

/// An ask taken from its user's pace: given back when dropped unkept, so
/// an ask whose write fails costs nothing (review of issue 45 item 7-P4).
struct Spent<'a> {
    rate: &'a super::ask_limit::AskRate,
    user: &'a str,
    kept: bool,
}

impl Drop for Spent<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.rate.give_back(self.user);
        }
    }
}

/// A user and how many questions they have open.
struct Open {
    user: String,
    questions: i64,
}

impl Asking {
    /// Under auth, the session's user and their open questions (issue 45
    /// item 7-P4), read before the ask's write: asks racing it can pass
    /// the bound together by as many as they are, which the user's pace
    /// bounds. `None` without auth, or for a session made without it.
    async fn open_questions(&self, session_id: &str) -> Result<Option<Open>> {
        if self.asks.is_none() {
            return Ok(None);
        }
        let pool = self.shared.db.pool();
        let Some(session) = sessions::get(pool, session_id).await? else {
            return Ok(None);
        };
        if session.created_by.is_empty() {
            return Ok(None);
        }
        let questions = sessions::open_questions(pool, &session.created_by).await?;
        Ok(Some(Open {
            user: session.created_by,
            questions,
        }))
    }

    /// Whether `open`'s user (with their agents) may ask `questions` more
    /// now: within the open bound, then one ask from the user's bucket.
    /// Asked only for a new bundle: an identical ask again makes nothing
    /// and is never refused.
    fn may_ask(&self, open: &Open, questions: usize) -> Result<()> {
        let Some(asks) = &self.asks else {
            return Ok(());
        };
        let limits = asks.limits();
        let asked = i64::try_from(questions).unwrap_or(i64::MAX);
        if open.questions.saturating_add(asked) > i64::from(limits.max_open_questions) {
            return Err(Error::TooMany(format!(
                "too many open questions: at most {} per user (--max-open-questions); \
                 wait for answers, or cancel some first",
                limits.max_open_questions
            )));
        }
        asks.take(&open.user).map_err(|wait| Error::TooFast {
            why: format!(
                "asking too fast: at most {} asks at once, then {} a minute, per user \
                 (--ask-burst, --asks-per-minute)",
                limits.burst, limits.per_minute
            ),
            // Whole seconds, rounded up: never told to come back too early.
            retry_after: Duration::from_secs(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)),
        })
    }
}

/// Stores the questions of a new bundle `pending_id` on the session's open
/// turn (starting one if it has none), D1 timestamps apart.
async fn insert_bundle(
    tx: &mut crate::db::Tx,
    session: &sessions::Session,
    spec: &clarify_core::BundleSpec,
    pending_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<Vec<Message>> {
    let turn_id = match turns::current(&mut **tx, &session.id).await? {
        Some(turn) if turn.completed_at.is_none() => turn.id,
        _ => {
            let turn = turns::Turn::starting(&session.id, now);
            turns::insert(tx, &turn).await?;
            turn.id
        }
    };
    let mut added = Vec::with_capacity(spec.questions.len());
    let total = i64::try_from(spec.questions.len()).unwrap_or(i64::MAX);
    for (index, question) in spec.questions.iter().enumerate() {
        let metadata = clarify_core::ClarificationMetadata {
            pending_id: pending_id.to_owned(),
            question_id: question.question_id.clone(),
            question: question.clone(),
            question_index: i64::try_from(index).unwrap_or(i64::MAX),
            question_total: total,
            context: spec.context.clone(),
            assignee: spec.assignee.clone(),
            tool_call: spec.tool_call.clone(),
            status: Status::Pending.into(),
            expires_at,
            ..Default::default()
        };
        // D1: distinct, increasing timestamps within the bundle.
        let at = now + i64::try_from(index).unwrap_or(0);
        let message = Message {
            id: new_id(),
            task_session_id: session.id.clone(),
            task_id: session.task_id.clone(),
            turn_id: turn_id.clone(),
            kind: CLARIFICATION_REQUEST.to_owned(),
            content: question.prompt.clone(),
            metadata: metadata.to_json().to_string(),
            created_at: at,
            updated_at: at,
            reject_reason: String::new(),
        };
        messages::insert(tx, &message).await?;
        added.push(message);
    }
    Ok(added)
}

/// How the asking agent will learn the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Asker {
    /// It waits for it (blocked, or about to poll `/wait`): attached.
    Attached,
    /// It asks again, waits later, or is resumed.
    Later,
    /// It polls an MCP task: the answer is kept for the poll.
    Task,
}

impl Asker {
    fn of(attach: bool) -> Self {
        if attach { Self::Attached } else { Self::Later }
    }
}

/// Every state a bundle can put a session into WAITING_FOR_INPUT from.
fn non_terminal() -> Vec<SessionState> {
    SessionState::ALL
        .into_iter()
        .filter(|s| !s.is_terminal())
        .collect()
}
