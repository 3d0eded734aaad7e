//! The pending-action projection of tasks and sessions (T1, T2), shared by
//! the REST routes and `list_tasks_kandev`.

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

/// Projects `session`: its pending action (T1) and its active bundles (D4).
///
/// # Errors
/// Database errors.
pub async fn session_view(db: &Db, session: sessions::Session) -> sqlx::Result<api::SessionView> {
    let active_pending_ids = repo::active_in_session(db.pool(), &session.id).await?;
    Ok(api::SessionView {
        pending_action: pending_action(session.state, !active_pending_ids.is_empty()),
        active_pending_ids,
        session: session.into(),
    })
}
