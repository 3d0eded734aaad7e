//! Workspaces, tasks, sessions, turns and transcripts: the resources around
//! the questions, and who may see them.

pub mod notify;
pub mod sessions;
pub mod tasks;

use clarify_core::Name;

use crate::auth::{self, Caller};
use crate::db;
use crate::http::error::{Error, Result};
use crate::state::AppState;

fn required(field: &'static str, text: &str) -> Result<String> {
    Name::parse(field, text)
        .map(Name::into_string)
        .map_err(|e| Error::BadRequest(e.to_string()))
}

/// The task `id` if `caller` may see it; unknown and hidden are the same 404.
async fn visible_task(state: &AppState, caller: &Caller, id: &str) -> Result<db::tasks::Task> {
    caller.person()?;
    let task = db::tasks::get(state.db().pool(), id).await?;
    match task {
        Some(task) if auth::may_access_task(state.db(), caller, &task.id).await? => Ok(task),
        _ => Err(Error::NotFound("task")),
    }
}

/// The session `id` if `caller` may see its task.
async fn visible_session(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<db::sessions::Session> {
    caller.person()?;
    let session = db::sessions::get(state.db().pool(), id).await?;
    match session {
        Some(s) if auth::may_access_task(state.db(), caller, &s.task_id).await? => Ok(s),
        _ => Err(Error::NotFound("session")),
    }
}
