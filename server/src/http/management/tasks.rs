//! Workspaces and tasks.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clarify_core::{ErrorBody, api};
use serde::Deserialize;

use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::{tasks, workspaces};
use crate::http::error::{Error, Result};
use crate::http::extract::{Path, Query, page_limit};
use crate::http::json::Json;
use crate::ids::new_id;
use crate::lifecycle::projection;
use crate::state::AppState;

use super::{required, visible_task};

/// Creates a workspace.
#[utoipa::path(
    post,
    path = "/workspaces",
    tag = "workspaces",
    request_body = api::NewWorkspace,
    responses(
        (status = 201, description = "Created", body = api::Workspace),
    )
)]
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
    state
        .db()
        .write(async |c| workspaces::insert(c, &workspace).await)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(api::Workspace::from(workspace)),
    ))
}

/// Lists workspaces.
#[utoipa::path(
    get,
    path = "/workspaces",
    tag = "workspaces",
    responses(
        (status = 200, description = "The workspaces you can see", body = api::Workspaces),
    )
)]
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
#[utoipa::path(
    post,
    path = "/tasks",
    tag = "tasks",
    request_body = api::NewTask,
    responses(
        (status = 201, description = "Created", body = api::TaskView),
        (status = 200, description = "The caller's task of the `project` named, made before", body = api::TaskView),
        (status = 404, description = "No such workspace, or not yours to see", body = ErrorBody),
    )
)]
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
    let title = required("title", &body.title)?;
    let description = body.description.unwrap_or_default();
    clarify_core::check_description("description", &description)
        .map_err(|e| Error::BadRequest(e.to_string()))?;
    let project = match body.project.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(name) => Some(required("project", name)?),
    };
    let now = now_micros();
    // Issue 45 item 3: under auth a project task (what `clarify mcp` asks
    // on) named without a workspace goes to its user's personal one, since
    // a task without a workspace is everyone's to see and answer (L1c). A
    // plain task keeps D5's `''`: its creator chose no workspace on purpose.
    let personal = match (user, &project) {
        (Some(user), Some(_)) if workspace_id.is_empty() => Some(user),
        _ => None,
    };
    let workspace_id = personal.map_or_else(|| workspace_id.to_owned(), workspaces::personal_id);
    let workspace_id = workspace_id.as_str();
    let task = tasks::Task {
        id: new_id(),
        workspace_id: workspace_id.to_owned(),
        title,
        description,
        created_at: now,
        updated_at: now,
    };
    let Some(project) = project else {
        state
            .db()
            .write(async |c| tasks::insert(c, &task).await)
            .await?;
        return Ok((
            StatusCode::CREATED,
            axum::Json(task_view(&state, task).await?),
        ));
    };
    let key = tasks::ProjectKey {
        owner_id: user.unwrap_or_default(),
        workspace_id,
        project: &project,
    };
    if let Some(found) = tasks::of_project(state.db().pool(), key).await? {
        return Ok((StatusCode::OK, axum::Json(task_view(&state, found).await?)));
    }
    // The task and its project row together; when a racing first caller's
    // row is there already, this task is dropped with the transaction and
    // that one answered.
    let mut tx = state.db().begin_write().await?;
    if let Some(user) = personal {
        // Made on first use, in the task's transaction: two first uses
        // racing make one workspace.
        workspaces::ensure_personal(&mut tx, user, now).await?;
    }
    tasks::insert(&mut tx, &task).await?;
    if tasks::claim_project(&mut tx, key, &task.id).await? {
        tx.commit().await?;
        return Ok((
            StatusCode::CREATED,
            axum::Json(task_view(&state, task).await?),
        ));
    }
    tx.rollback().await?;
    let found = tasks::of_project(state.db().pool(), key)
        .await?
        .ok_or(Error::NotFound("task"))?;
    Ok((StatusCode::OK, axum::Json(task_view(&state, found).await?)))
}

/// `?workspace_id=&limit=&cursor=`; read as text so that a bad value gets
/// our error naming it, not the extractor's.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskQuery {
    /// Only this workspace's tasks.
    workspace_id: Option<String>,
    /// `oldest` (the default) or `newest` first.
    order: Option<String>,
    /// `true`: only tasks with a question waiting now; `false` or absent:
    /// all.
    waiting: Option<String>,
    /// Page size (a whole number): default 50, at most 200.
    limit: Option<String>,
    /// The previous page's `next_cursor`.
    cursor: Option<String>,
}

/// Lists tasks, a page at a time (keyset: `next_cursor` continues).
#[utoipa::path(
    get,
    path = "/tasks",
    tag = "tasks",
    params(TaskQuery),
    responses(
        (status = 200, description = "A page of the tasks you can see, oldest first (or newest, `?order=newest`), each with its last activity and outcome", body = api::Tasks),
        (status = 400, description = "A `limit`, `cursor`, `order` or `waiting` that is not one", body = ErrorBody),
    )
)]
pub async fn list_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<TaskQuery>,
) -> Result<impl IntoResponse> {
    let limit = page_limit(query.limit.as_deref())?;
    let newest_first = match query.order.as_deref().map(str::trim).unwrap_or_default() {
        "" | "oldest" => false,
        "newest" => true,
        _ => return Err(Error::BadRequest("order: oldest or newest".to_owned())),
    };
    let waiting = match query.waiting.as_deref().map(str::trim).unwrap_or_default() {
        "" | "false" => false,
        "true" => true,
        _ => return Err(Error::BadRequest("waiting: true or false".to_owned())),
    };
    let filter = tasks::TaskFilter {
        workspace_id: query.workspace_id.as_deref(),
        waiting,
        newest_first,
    };
    let page = state
        .lifecycle
        .reading
        .tasks_page(
            &caller,
            filter,
            query.cursor.as_deref().unwrap_or_default(),
            limit,
        )
        .await?;
    Ok(axum::Json(page))
}

/// One task.
#[utoipa::path(
    get,
    path = "/tasks/{id}",
    tag = "tasks",
    params(("id" = String, Path, description = "The task's id")),
    responses(
        (status = 200, description = "The task", body = api::TaskView),
        (status = 404, description = "No such task, or not yours to see", body = ErrorBody),
    )
)]
pub async fn get_task(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<impl IntoResponse> {
    let task = visible_task(&state, &caller, &id).await?;
    Ok(axum::Json(task_view(&state, task).await?))
}
