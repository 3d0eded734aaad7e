//! Workspaces, tasks, sessions, turns and transcripts.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clarify_core::{Name, SessionState, api};
use serde::Deserialize;

use super::error::{Error, Result};
use super::json::Json;
use crate::AppState;
use crate::auth::{self, Caller};
use crate::clock::now_micros;
use crate::db::{messages, sessions, tasks, turns, workspaces};
use crate::ids::{hash_secret, new_id, new_secret};
use crate::lifecycle::projection;

fn required(field: &'static str, text: &str) -> Result<String> {
    Name::parse(field, text)
        .map(Name::into_string)
        .map_err(|e| Error::BadRequest(e.to_string()))
}

/// The task `id` if `caller` may see it; unknown and hidden are the same 404.
async fn visible_task(state: &AppState, caller: &Caller, id: &str) -> Result<tasks::Task> {
    caller.person()?;
    let task = tasks::get(state.db().pool(), id).await?;
    match task {
        Some(task) if auth::may_access_task(state.db(), caller, &task.id).await? => Ok(task),
        _ => Err(Error::NotFound("task")),
    }
}

/// The session `id` if `caller` may see its task.
async fn visible_session(state: &AppState, caller: &Caller, id: &str) -> Result<sessions::Session> {
    caller.person()?;
    let session = sessions::get(state.db().pool(), id).await?;
    match session {
        Some(s) if auth::may_access_task(state.db(), caller, &s.task_id).await? => Ok(s),
        _ => Err(Error::NotFound("session")),
    }
}

/// Creates a workspace.
pub async fn create_workspace(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<api::NewWorkspace>,
) -> Result<impl IntoResponse> {
    let owner = caller.person()?.unwrap_or_default();
    let workspace = workspaces::Workspace {
        id: new_id(),
        name: required("name", &body.name)?,
        owner_id: owner.to_owned(),
        created_at: now_micros(),
    };
    workspaces::insert(state.db().pool(), &workspace).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(api::Workspace::from(workspace)),
    ))
}

/// Lists workspaces.
pub async fn list_workspaces(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<impl IntoResponse> {
    let list = workspaces::list_visible(state.db().pool(), caller.person()?).await?;
    Ok(axum::Json(api::Workspaces {
        workspaces: list.into_iter().map(Into::into).collect(),
    }))
}

async fn task_view(state: &AppState, task: tasks::Task) -> Result<api::TaskView> {
    Ok(projection::task_view(state.db(), task).await?)
}

/// Creates a task.
pub async fn create_task(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<api::NewTask>,
) -> Result<impl IntoResponse> {
    let user = caller.person()?;
    let workspace_id = body.workspace_id.as_deref().unwrap_or_default().trim();
    if !workspace_id.is_empty() {
        let workspace = workspaces::get(state.db().pool(), workspace_id).await?;
        let visible = workspace
            .is_some_and(|w| w.owner_id.is_empty() || user.is_none_or(|u| w.owner_id == u));
        if !visible {
            return Err(Error::NotFound("workspace"));
        }
    }
    let now = now_micros();
    let task = tasks::Task {
        id: new_id(),
        workspace_id: workspace_id.to_owned(),
        title: required("title", &body.title)?,
        description: body.description.unwrap_or_default(),
        created_at: now,
        updated_at: now,
    };
    tasks::insert(state.db().pool(), &task).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(task_view(&state, task).await?),
    ))
}

/// `?workspace_id=&limit=&cursor=`; read as text so that a bad value gets
/// our error naming it, not the extractor's.
#[derive(Debug, Deserialize)]
pub struct TaskQuery {
    workspace_id: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
}

/// Lists tasks, a page at a time (keyset: `next_cursor` continues).
pub async fn list_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<TaskQuery>,
) -> Result<impl IntoResponse> {
    let limit = match query.limit.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(text.parse::<i64>().map_err(|_| {
            Error::BadRequest("limit: must be a whole number (default 50, at most 200)".into())
        })?),
    };
    let page = state
        .lifecycle
        .tasks_page(
            &caller,
            query.workspace_id.as_deref().unwrap_or_default(),
            query.cursor.as_deref().unwrap_or_default(),
            limit,
        )
        .await?;
    Ok(axum::Json(page))
}

/// One task.
pub async fn get_task(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    let task = visible_task(&state, &caller, &id).await?;
    Ok(axum::Json(task_view(&state, task).await?))
}

/// A task's sessions, primary (oldest) first, each with its pending action
/// and active bundles.
pub async fn list_sessions(
    State(state): State<AppState>,
    caller: Caller,
    Path(task_id): Path<String>,
) -> Result<impl IntoResponse> {
    visible_task(&state, &caller, &task_id).await?;
    let list = sessions::for_task(state.db().pool(), &task_id).await?;
    let mut views = Vec::with_capacity(list.len());
    for session in list {
        views.push(projection::session_view(state.db(), session).await?);
    }
    Ok(axum::Json(api::Sessions { sessions: views }))
}

/// One session, with its pending action and active bundles.
pub async fn get_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    let session = visible_session(&state, &caller, &id).await?;
    Ok(axum::Json(
        projection::session_view(state.db(), session).await?,
    ))
}

/// Creates a session and returns its agent token, once.
pub async fn create_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(task_id): Path<String>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Result<impl IntoResponse> {
    // The body is optional: a session without a resume target needs none.
    // One that is sent must say it is JSON, like every other body.
    let blank = body.iter().all(u8::is_ascii_whitespace);
    if !blank || headers.contains_key(axum::http::header::CONTENT_TYPE) {
        super::json::require_json(&headers)?;
    }
    let body: api::NewSession = if blank {
        api::NewSession::default()
    } else {
        super::json::decode(&body)?
    };
    if let Some(target) = &body.resume {
        state
            .lifecycle
            .resumer()
            .check(target)
            .map_err(Error::BadRequest)?;
    }
    visible_task(&state, &caller, &task_id).await?;
    let now = now_micros();
    let token = new_secret("clk_agent_");
    let session = sessions::Session {
        id: new_id(),
        task_id,
        state: SessionState::Running,
        resume_target: body
            .resume
            .as_ref()
            .map(|r| serde_json::to_string(r).unwrap_or_default())
            .unwrap_or_default(),
        created_at: now,
        updated_at: now,
    };
    sessions::insert(state.db().pool(), &session, &hash_secret(&token)).await?;
    let created = api::CreatedSession {
        session: session.into(),
        agent_token: token,
        resume: body.resume,
    };
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Changes a session's state.
pub async fn patch_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Json(body): Json<api::SessionPatch>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    let session = state.lifecycle.set_session_state(&id, &body.state).await?;
    Ok(axum::Json(api::Session::from(session)))
}

/// Starts a turn.
pub async fn start_turn(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    let turn = state.lifecycle.start_turn(&id, now_micros()).await?;
    Ok((StatusCode::CREATED, axum::Json(api::Turn::from(turn))))
}

/// Completes a turn (the detach pass).
pub async fn complete_turn(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, turn_id)): Path<(String, String)>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    turns::get(state.db().pool(), &id, &turn_id)
        .await?
        .ok_or(Error::NotFound("turn"))?;
    state.lifecycle.complete_turn(&id, &turn_id).await?;
    let turn = turns::get(state.db().pool(), &id, &turn_id)
        .await?
        .ok_or(Error::NotFound("turn"))?;
    Ok(axum::Json(api::Turn::from(turn)))
}

/// A session's transcript.
pub async fn list_messages(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    let list = messages::for_session(state.db().pool(), &id).await?;
    Ok(axum::Json(api::Messages {
        messages: list.into_iter().map(Into::into).collect(),
    }))
}
