//! The pending-action projection of tasks (T1, T2), shared by the REST task
//! routes and `list_tasks_kandev`.

use clarify_core::{PendingAction, pending_action};
use serde::Serialize;

use crate::db::clarification as repo;
use crate::db::{Db, sessions, tasks};

/// A task with its pending actions. Both keys are always present and `null`
/// when nothing waits (T2).
#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    /// The task.
    #[serde(flatten)]
    pub task: tasks::Task,
    /// `"clarification"` when any input-capable session (RUNNING or
    /// WAITING_FOR_INPUT) has an active bundle.
    pub task_pending_action: Option<PendingAction>,
    /// The same for the task's first (primary) session.
    pub primary_session_pending_action: Option<PendingAction>,
}

/// Projects `task` (activeness from the one active rule, D4).
///
/// # Errors
/// Database errors.
pub async fn task_view(db: &Db, task: tasks::Task) -> sqlx::Result<TaskView> {
    let with_active = repo::sessions_with_active(db.pool(), &task.id).await?;
    let sessions = sessions::for_task(db.pool(), &task.id).await?;
    let pending = |s: &sessions::Session| pending_action(s.state, with_active.contains(&s.id));
    Ok(TaskView {
        task_pending_action: sessions.iter().find_map(pending),
        primary_session_pending_action: sessions.first().and_then(pending),
        task,
    })
}
