//! An agent's question asked as an MCP task (issue 30 item 3, the tasks
//! extension): the task is the bundle, so it lives as long as the bundle,
//! on every replica and across restarts. Asking returns at once; a poll is
//! the asking agent's wait of zero (it keeps the agent attached, so an
//! answer given while it polls is handed to it, R7, and it collects an
//! answer kept for it); cancelling detaches, as a cancelled blocking call
//! does, so the answer then resumes the agent instead (A5a).

use std::time::Duration;

use clarify_core::stored::bundle_questions;
use clarify_core::{NewBundle, Question, SessionId};

use super::{Error, Lifecycle, Result, WaitOutcome};
use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Scope, Transition};
use crate::db::mcp_tasks::{self, McpTask};

/// Where a task stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// The agent cancelled it while nobody had answered.
    Cancelled,
    /// What a wait of zero saw: still waiting, or how it ended.
    Outcome(WaitOutcome),
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

impl Lifecycle {
    /// Asks `new` on the agent's session as a task and looks at it once:
    /// the task exists (a poll finds it) before this returns.
    ///
    /// # Errors
    /// As [`Lifecycle::create_bundle`].
    pub async fn ask_as_task(
        &self,
        caller: &Caller,
        session_id: &SessionId,
        new: &NewBundle,
        expires_in: Option<Duration>,
    ) -> Result<TaskLook> {
        // Attached from the start, as a blocked ask is: the first poll
        // comes well within the grace.
        let created = self
            .create_bundle(session_id, new, true, expires_in)
            .await?;
        let (pending_id, session_id) = (created.pending_id.as_str(), session_id.as_str());
        let now = now_micros();
        self.db
            .write(async |c| mcp_tasks::insert(c, pending_id, session_id, now).await)
            .await?;
        self.look_at_task(caller, pending_id).await
    }

    /// The task `pending_id` as its asking agent sees it now.
    ///
    /// # Errors
    /// Not found: unknown, not a task, or another session's.
    pub async fn look_at_task(&self, caller: &Caller, pending_id: &str) -> Result<TaskLook> {
        let task = self.task_of(caller, pending_id).await?;
        let mut bundle = self.authorized_bundle(caller, pending_id).await?;
        let state = match task.cancelled_at {
            Some(_) => TaskState::Cancelled,
            None => {
                let outcome = self.wait_on(caller, &bundle, Duration::ZERO).await?;
                let ended = !matches!(outcome, WaitOutcome::TimedOut | WaitOutcome::ShuttingDown);
                if ended && bundle.winner().is_none() {
                    // Read before it ended: its last change is newer.
                    bundle = repo::load(self.db.pool(), pending_id)
                        .await?
                        .unwrap_or(bundle);
                }
                TaskState::Outcome(outcome)
            }
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
    /// the task is cancelled; if someone has, the task keeps its answer.
    ///
    /// # Errors
    /// Not found as [`Lifecycle::look_at_task`]; database errors.
    pub async fn cancel_task(&self, caller: &Caller, pending_id: &str) -> Result<()> {
        let task = self.task_of(caller, pending_id).await?;
        if task.cancelled_at.is_some() {
            return Ok(());
        }
        let now = now_micros();
        // Guarded: a claim that won first leaves nothing to detach, and the
        // task then completes with that answer instead of hiding it.
        let detached =
            repo::transition(&self.db, Scope::Bundle(pending_id), Transition::Detach, now).await?;
        if detached.is_empty() {
            return Ok(());
        }
        let session_id = task.session_id.as_str();
        self.db
            .write(async |c| mcp_tasks::cancel(c, pending_id, session_id, now).await)
            .await?;
        self.publish_bundle(pending_id).await
    }

    /// The task if `caller` is the agent that asked it.
    ///
    /// # Errors
    /// Not found as [`Lifecycle::look_at_task`]; database errors.
    pub async fn task_of(&self, caller: &Caller, pending_id: &str) -> Result<McpTask> {
        let session_id = caller
            .agent()
            .map(|agent| agent.session_id.as_str())
            .ok_or(Error::NotFound("task"))?;
        mcp_tasks::get(self.db.pool(), pending_id, session_id)
            .await?
            .ok_or(Error::NotFound("task"))
    }
}
