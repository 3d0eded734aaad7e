//! An agent's question asked as an MCP task (issue 30 item 3, the tasks
//! extension): the task is the bundle, so it lives as long as the bundle,
//! on every replica and across restarts. Its answer is kept for the
//! agent's next poll (pull delivery, never handed over live nor resumed:
//! `db::mcp_tasks::polled_sql`, read by the claim), and that poll collects
//! it; a poll holds nothing and attaches nothing. Cancelling detaches, as a
//! cancelled blocking call does, so an answer after it resumes the agent
//! instead (A5a).

use std::time::Duration;

use clarify_core::stored::bundle_questions;
use clarify_core::{NewBundle, Question, RespondBody, SessionId, Status};

use super::{Asking, Error, Result, WaitOutcome, expiry};
use crate::auth::Caller;
use crate::clock::{self, now_micros};
use crate::db::clarification::{self as repo, Bundle, Scope, Transition};
use crate::db::mcp_tasks::{self, McpTask};

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// The agent cancelled it while nobody had answered.
    Cancelled,
    /// Nobody has answered yet (or an answer is on its way).
    Working,
    /// How it ended: answered or declined, expired, or closed unanswered.
    Ended(WaitOutcome),
}

/// One look at a task.
#[derive(Debug, Clone)]
pub struct TaskLook {
    /// Its row.
    pub task: McpTask,
    /// The questions asked, for the result's labels.
    pub questions: Vec<Question>,
    /// When it last changed (microseconds).
    pub updated_at: i64,
    /// When its question expires unanswered, if it does.
    pub expires_at: Option<i64>,
    /// Where it stands.
    pub state: TaskState,
}

impl Asking {
    /// Asks `new` on the agent's session as a task and looks at it once:
    /// the task exists (a poll finds it) before this returns.
    ///
    /// # Errors
    /// As [`Asking::create_bundle`].
    pub async fn ask_as_task(
        &self,
        caller: &Caller,
        session_id: &SessionId,
        new: &NewBundle,
        expires_in: Option<Duration>,
    ) -> Result<TaskLook> {
        let created = self.create_task(session_id, new, expires_in).await?;
        self.look_at_task(caller, &created.pending_id).await
    }

    /// The task `pending_id` as its asking agent sees it now; an answer
    /// kept for it is collected (delivered from then on).
    ///
    /// # Errors
    /// Not found: unknown, not a task, or another session's.
    pub async fn look_at_task(&self, caller: &Caller, pending_id: &str) -> Result<TaskLook> {
        let task = self.task_of(caller, pending_id).await?;
        let mut bundle = self.shared.authorized_bundle(caller, pending_id).await?;
        if task.cancelled_at.is_none() && bundle.awaits_pickup() {
            self.shared.collect(&bundle).await?;
            bundle = repo::load(self.shared.db.pool(), pending_id)
                .await?
                .ok_or(Error::NotFound("task"))?;
        }
        let state = match task.cancelled_at {
            Some(_) => TaskState::Cancelled,
            None => state_of(&bundle, &task),
        };
        // A cancelled task no longer follows its bundle.
        let updated_at = task
            .cancelled_at
            .unwrap_or_else(|| bundle.updated_at().max(task.created_at));
        Ok(TaskLook {
            questions: bundle_questions(&bundle.messages),
            expires_at: bundle.expires_at(),
            updated_at,
            task,
            state,
        })
    }

    /// The agent cancels its task: if nobody has answered, the bundle is
    /// detached (it stays answerable, and its answer resumes the agent) and
    /// the task cancelled, in one transaction; if someone has, the task
    /// keeps its answer (kept for the agent until collected).
    ///
    /// # Errors
    /// Not found as [`Asking::look_at_task`]; database errors.
    pub async fn cancel_task(&self, caller: &Caller, pending_id: &str) -> Result<()> {
        let task = self.task_of(caller, pending_id).await?;
        if task.cancelled_at.is_some() {
            return Ok(());
        }
        let now = now_micros();
        let mut tx = self.shared.db.begin_write().await?;
        // Guarded: a claim that won first leaves nothing to detach.
        let detached = repo::transition_in(
            &mut tx,
            &self.shared.db,
            Scope::Bundle(pending_id),
            Transition::Detach,
            now,
        )
        .await?;
        if detached.is_empty() {
            tx.rollback().await?;
            return Ok(());
        }
        mcp_tasks::cancel(&mut tx, pending_id, now).await?;
        tx.commit().await?;
        self.shared.publish_bundle(pending_id).await
    }

    /// The task if `caller` is the agent that asked it.
    ///
    /// # Errors
    /// Not found as [`Asking::look_at_task`]; database errors.
    pub async fn task_of(&self, caller: &Caller, pending_id: &str) -> Result<McpTask> {
        let session_id = caller
            .agent()
            .map(|agent| agent.session_id.as_str())
            .ok_or(Error::NotFound("task"))?;
        mcp_tasks::get(self.shared.db.pool(), pending_id, session_id)
            .await?
            .ok_or(Error::NotFound("task"))
    }
}

/// Where an uncancelled task stands, from its bundle's rows alone: a claim
/// in flight (or one being taken back) is still working, never "closed".
fn state_of(bundle: &Bundle, task: &McpTask) -> TaskState {
    let pending_id = bundle.pending_id();
    if let Some(winner) = bundle.winner() {
        if bundle.delivery_pending() {
            return TaskState::Working;
        }
        let mut response = winner.to_response(pending_id, &clock::rfc3339(bundle.updated_at()));
        // The rows keep no reason (R2b); the task does.
        if winner.status == Status::Rejected {
            response.reject_reason.clone_from(&task.reject_reason);
        }
        return TaskState::Ended(WaitOutcome::Resolved(RespondBody::new(
            true,
            winner.status,
            response,
        )));
    }
    let closed = |status| {
        bundle
            .messages
            .iter()
            .any(|m| m.metadata.status.known() == Some(status))
    };
    if expiry::timed_out(bundle) {
        TaskState::Ended(WaitOutcome::Expired(expiry::expired_body(
            bundle, pending_id,
        )))
    } else if closed(Status::Expired) || closed(Status::Cancelled) {
        TaskState::Ended(WaitOutcome::Closed)
    } else {
        TaskState::Working
    }
}
