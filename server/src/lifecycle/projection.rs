//! The pending-action projection of tasks (T1, T2), shared by the REST task
//! routes and `list_tasks_kandev`.

use clarify_core::{api, pending_action};

use crate::db::clarification as repo;
use crate::db::{Db, sessions, tasks};

/// Projects `task` (activeness from the one active rule, D4).
///
/// # Errors
/// Database errors.
pub async fn task_view(db: &Db, task: tasks::Task) -> sqlx::Result<api::TaskView> {
    let with_active = repo::sessions_with_active(db.pool(), &task.id).await?;
    let sessions = sessions::for_task(db.pool(), &task.id).await?;
    let pending = |s: &sessions::Session| pending_action(s.state, with_active.contains(&s.id));
    Ok(api::TaskView {
        task_pending_action: sessions.iter().find_map(pending),
        primary_session_pending_action: sessions.first().and_then(pending),
        task: task.into(),
    })
}
