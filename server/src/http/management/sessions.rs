//! A task's sessions, their turns and transcripts.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use clarify_core::listing::clamp_limit;
use clarify_core::{ErrorBody, SessionId, SessionState, TurnId, api};

use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::{self, messages, sessions, turns};
use crate::http::error::{Error, Result};
use crate::http::extract::{PageQuery, Path, Query};
use crate::http::json::Json;
use crate::ids::{hash_secret, new_id, new_secret};
use crate::lifecycle::projection;
use crate::state::AppState;

use super::{visible_session, visible_task};

/// A task's sessions, primary (oldest) first, each with its pending action
/// and active bundles.
#[utoipa::path(
    get,
    path = "/tasks/{id}/sessions",
    tag = "sessions",
    params(("id" = String, Path, description = "The task's id")),
    responses(
        (status = 200, description = "Its sessions, primary first", body = api::Sessions),
        (status = 404, description = "No such task, or not yours to see", body = ErrorBody),
    )
)]
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
#[utoipa::path(
    get,
    path = "/sessions/{id}",
    tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 200, description = "The session", body = api::SessionView),
        (status = 404, description = "No such session, or not yours to see", body = ErrorBody),
    )
)]
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

/// The longest session description (characters), as the schema says.
const MAX_DESCRIPTION: usize = 2000;

/// Creates a session and returns its agent token, once.
#[utoipa::path(
    post,
    path = "/tasks/{id}/sessions",
    tag = "sessions",
    params(("id" = String, Path, description = "The task's id")),
    request_body(content = Option<api::NewSession>, description = "Optional: where the agent is resumed"),
    responses(
        (status = 201, description = "Created, with its agent token (shown once)", body = api::CreatedSession),
        (status = 404, description = "No such task, or not yours to see", body = ErrorBody),
        (status = 429, description = "The user (with their agents) has as many open sessions as they may (`--max-open-sessions`)", body = ErrorBody),
    )
)]
pub async fn create_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(task_id): Path<String>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Result<impl IntoResponse> {
    // The body is optional: a session without a resume target needs none.
    // One that is sent must say it is JSON, like every other body, and be
    // JSON: white space alone is not (Schemathesis found `\r` taken as no
    // body, seed 8332633005430374262).
    let blank = body.is_empty();
    if !blank || headers.contains_key(axum::http::header::CONTENT_TYPE) {
        crate::http::json::require_json(&headers)?;
    }
    let body: api::NewSession = if blank {
        api::NewSession::default()
    } else {
        crate::http::json::decode(&body)?
    };
    if let Some(target) = &body.resume {
        state
            .lifecycle
            .resolving
            .resumer()
            .check(target)
            .map_err(Error::BadRequest)?;
    }
    let description = body.description.as_deref().unwrap_or_default().trim();
    if description.chars().count() > MAX_DESCRIPTION {
        return Err(Error::BadRequest(format!(
            "description: at most {MAX_DESCRIPTION} characters"
        )));
    }
    visible_task(&state, &caller, &task_id).await?;
    let now = now_micros();
    let token = new_secret(crate::auth::identify::AGENT_PREFIX);
    let session = sessions::Session {
        id: new_id(),
        task_id,
        state: SessionState::Running,
        resume_target: body
            .resume
            .as_ref()
            .map(|r| serde_json::to_string(r).unwrap_or_default())
            .unwrap_or_default(),
        description: description.to_owned(),
        // Its agent counts against this user (issue 26); agent tokens
        // cannot create sessions at all.
        created_by: crate::auth::owner_id(&caller)
            .map(ToString::to_string)
            .unwrap_or_default(),
        created_at: now,
        updated_at: now,
    };
    let limit = state.config.max_open_sessions();
    if !sessions::insert_within(state.db(), &session, &hash_secret(&token), limit).await? {
        return Err(Error::TooMany(format!(
            "too many open sessions: at most {limit} per user (--max-open-sessions); end some first"
        )));
    }
    let created = api::CreatedSession {
        session: session.into(),
        agent_token: token,
        resume: body.resume,
    };
    Ok((StatusCode::CREATED, axum::Json(created)))
}

/// Changes a session's state.
#[utoipa::path(
    patch,
    path = "/sessions/{id}",
    tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    request_body = api::SessionPatch,
    responses(
        (status = 200, description = "The session, changed", body = api::Session),
        (status = 404, description = "No such session, or not yours to see", body = ErrorBody),
        (status = 409, description = "The session has ended", body = ErrorBody),
    )
)]
pub async fn patch_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<SessionId>,
    Json(body): Json<api::SessionPatch>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    let session = state
        .lifecycle
        .sessions
        .set_session_state(&id, &body.state)
        .await?;
    Ok(axum::Json(api::Session::from(session)))
}

/// Starts a turn.
#[utoipa::path(
    post,
    path = "/sessions/{id}/turns",
    tag = "sessions",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 201, description = "Started", body = api::Turn),
        (status = 404, description = "No such session, or not yours to see", body = ErrorBody),
        (status = 409, description = "The session has ended", body = ErrorBody),
    )
)]
pub async fn start_turn(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<SessionId>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    let turn = state
        .lifecycle
        .sessions
        .start_turn(&id, now_micros())
        .await?;
    Ok((StatusCode::CREATED, axum::Json(api::Turn::from(turn))))
}

/// Completes a turn (the detach pass).
#[utoipa::path(
    post,
    path = "/sessions/{id}/turns/{turn_id}/complete",
    tag = "sessions",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("turn_id" = String, Path, description = "The turn's id"),
    ),
    responses(
        (status = 200, description = "Completed", body = api::Turn),
        (status = 404, description = "No such session or turn, or not yours to see", body = ErrorBody),
        (status = 409, description = "The session has ended", body = ErrorBody),
    )
)]
pub async fn complete_turn(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, turn_id)): Path<(SessionId, TurnId)>,
) -> Result<impl IntoResponse> {
    visible_session(&state, &caller, &id).await?;
    turns::get(state.db().pool(), &id, &turn_id)
        .await?
        .ok_or(Error::NotFound("turn"))?;
    state
        .lifecycle
        .sessions
        .complete_turn(&id, &turn_id)
        .await?;
    let turn = turns::get(state.db().pool(), &id, &turn_id)
        .await?
        .ok_or(Error::NotFound("turn"))?;
    Ok(axum::Json(api::Turn::from(turn)))
}

/// A session's transcript.
#[utoipa::path(
    get,
    path = "/sessions/{id}/messages",
    tag = "sessions",
    params(("id" = String, Path, description = "The session's id"), PageQuery),
    responses(
        (status = 200, description = "A page of the transcript, oldest first (keyset: `next_cursor` continues)", body = api::Messages),
        (status = 400, description = "A `limit` or `cursor` that is not one", body = ErrorBody),
        (status = 404, description = "No such session, or not yours to see", body = ErrorBody),
    )
)]
pub async fn list_messages(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    Query(page): Query<PageQuery>,
) -> Result<impl IntoResponse> {
    let limit = clamp_limit(page.limit()?);
    let after = page.after()?;
    visible_session(&state, &caller, &id).await?;
    let (list, more) =
        messages::for_session_page(state.db().pool(), &id, after.as_ref(), limit).await?;
    Ok(axum::Json(api::Messages {
        next_cursor: db::page::next_cursor(&list, more, |m| (m.created_at, m.id.clone())),
        messages: list
            .into_iter()
            .map(|m| {
                let mut m = m.into();
                crate::markdown::message(&mut m);
                m
            })
            .collect(),
    }))
}
