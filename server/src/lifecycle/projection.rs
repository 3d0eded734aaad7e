//! The pending-action projection of tasks and sessions (T1, T2), shared by
//! the REST routes and `list_tasks_kandev`.

use std::collections::HashMap;

use clarify_core::{api, pending_action};

use crate::clock;
use crate::db::clarification as repo;
use crate::db::{Db, sessions, tasks};

/// Projects `tasks` (activeness from the one active rule, D4) with three
/// queries in all, whatever their number: their active sessions, their
/// sessions, and what last happened in each.
///
/// # Errors
/// Database errors.
pub async fn task_views(db: &Db, tasks: Vec<tasks::Task>) -> sqlx::Result<Vec<api::TaskView>> {
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let with_active = repo::sessions_with_active(db.pool(), &ids).await?;
    let mut sessions_of: HashMap<String, Vec<sessions::Session>> = HashMap::new();
    for session in sessions::for_tasks(db.pool(), &ids).await? {
        sessions_of
            .entry(session.task_id.clone())
            .or_default()
            .push(session);
    }
    let pending = |s: &sessions::Session| pending_action(s.state, with_active.contains(&s.id));
    let activity = tasks::activity(db.pool(), &ids).await?;
    Ok(tasks
        .into_iter()
        .map(|task| {
            let sessions = sessions_of.get(&task.id).map_or(&[][..], Vec::as_slice);
            let task_pending_action = sessions.iter().find_map(pending);
            let done = activity.get(&task.id).cloned().unwrap_or_default();
            let last = task
                .updated_at
                .max(done.newest_message)
                .max(done.last_question_change);
            api::TaskView {
                last_outcome: if done.defaulted && done.last_status == "answered" {
                    clarify_core::status::DEFAULTED.to_owned()
                } else {
                    last_outcome(&done.last_status, task_pending_action.is_some())
                },
                last_activity_at: clock::rfc3339(last),
                task_pending_action,
                primary_session_pending_action: sessions.first().and_then(pending),
                task: task.into(),
            }
        })
        .collect())
}

/// How a task's newest question stands, from its stored status: still
/// `pending` only while it is active (T1); a pending one left behind by a
/// newer turn is `superseded`.
fn last_outcome(stored: &str, waiting: bool) -> String {
    match stored {
        "" if !waiting => String::new(),
        "" | "pending" if waiting => "pending".to_owned(),
        "" | "pending" => clarify_core::status::SUPERSEDED.to_owned(),
        other => other.to_owned(),
    }
}

/// Projects one task.
///
/// # Errors
/// Database errors.
pub async fn task_view(db: &Db, task: tasks::Task) -> sqlx::Result<api::TaskView> {
    let mut views = task_views(db, vec![task]).await?;
    Ok(views.remove(0))
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
