//! `/api/v1/clarification/*`: ask (A6), read, wait, respond (R10), cancel (A9).

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use clarify_core::{Attempts, Channel, ErrorBody, PendingId, RespondBody, Submission, api};
use serde::Deserialize;

use super::error::{Error, Result};
use super::extract::{PageQuery, Path, Query};
use super::json::Json;
use crate::auth::Caller;
use crate::lifecycle::{Via, WaitOutcome};
use crate::state::AppState;

/// Creates a bundle. The agent proves it owns the session with its agent
/// token (`Authorization: Bearer`).
#[utoipa::path(
    post,
    path = "/clarification/request",
    tag = "clarification",
    request_body = api::Ask,
    security(("agent_token" = [])),
    responses(
        (status = 201, description = "Asked", body = api::Asked),
        (status = 200, description = "An identical active request already existed", body = api::Asked),
        (status = 429, description = "Under auth, the session's user (with their agents) keeps as many open questions as they may (`--max-open-questions`), or asks faster than they may (`--ask-burst`, `--asks-per-minute`); `Retry-After` says when to try again", body = ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Json(body): Json<api::Ask>,
) -> Result<impl IntoResponse> {
    let agent = caller.agent().ok_or(Error::BadCredentials(
        "a valid agent token is required (Authorization: Bearer clk_agent_…)",
    ))?;
    if !body.session_id.is_empty() && body.session_id != agent.session_id {
        return Err(Error::Forbidden(
            "session_id: this agent token belongs to another session",
        ));
    }
    let created = state
        .lifecycle
        .asking
        .create_bundle(
            &agent.session_id,
            &body.bundle,
            body.attach,
            crate::lifecycle::expires_in(body.expires_in_seconds)?,
        )
        .await?;
    let status = if created.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let asked = api::Asked {
        id: created.pending_id.to_string(),
        pending_id: created.pending_id.into_string(),
        created: created.created,
    };
    Ok((status, axum::Json(asked)))
}

/// Reads a bundle; with the asking agent's token, collects an answer kept
/// for it.
#[utoipa::path(
    get,
    path = "/clarification/{id}",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id")),
    responses(
        (status = 200, description = "The bundle", body = api::BundleView),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
    )
)]
pub async fn read(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
) -> Result<axum::Json<api::BundleView>> {
    let mut view = state
        .lifecycle
        .reading
        .read_collecting(&caller, &id)
        .await?;
    crate::markdown::bundle(&mut view.bundle);
    Ok(axum::Json(view))
}

/// `?timeout=` seconds for `/wait`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WaitQuery {
    /// Seconds to block: default 30, at most 120.
    timeout: Option<u64>,
}

/// The longest a single `/wait` may block.
const MAX_WAIT: Duration = Duration::from_secs(120);
const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// Long-polls for the answer.
#[utoipa::path(
    get,
    path = "/clarification/{id}/wait",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id"), WaitQuery),
    responses(
        (status = 200, description = "Answered or rejected", body = RespondBody),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
        (status = 409, description = "No longer active, with no answer to give", body = ErrorBody),
        (status = 503, description = "The server is shutting down: wait again", body = ErrorBody),
        (status = 504, description = "No answer yet: wait again (A5a)", body = ErrorBody),
    )
)]
pub async fn wait(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
    Query(query): Query<WaitQuery>,
) -> Result<axum::Json<RespondBody>> {
    let timeout = query
        .timeout
        .map_or(DEFAULT_WAIT, Duration::from_secs)
        .min(MAX_WAIT);
    match state.lifecycle.reading.wait(&caller, &id, timeout).await? {
        WaitOutcome::Resolved(body) => Ok(axum::Json(body)),
        WaitOutcome::TimedOut => Err(Error::WaitTimeout),
        WaitOutcome::Closed => Err(Error::Conflict("clarification request is no longer active")),
        WaitOutcome::Expired(body) => Ok(axum::Json(body)),
        WaitOutcome::ShuttingDown => Err(Error::ShuttingDown),
    }
}

/// Answers or rejects (the R10 table).
#[utoipa::path(
    post,
    path = "/clarification/{id}/respond",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id")),
    request_body = Submission,
    responses(
        (status = 200, description = "Claimed, or told the winner's answer (R10, R12)", body = RespondBody),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
        (status = 409, description = "No longer active, with no answer to give (N4a)", body = ErrorBody),
        (status = 422, description = "JSON of the wrong shape, or `reason` and `reject_reason` both given with different texts (N1), which a schema cannot state: the message names the field", body = ErrorBody),
    )
)]
pub async fn respond(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Path(id): Path<PendingId>,
    Json(submission): Json<Submission>,
) -> Result<axum::Json<RespondBody>> {
    let via = Via::channel(channel_of(&headers));
    Ok(axum::Json(
        state
            .lifecycle
            .resolving
            .resolve(&caller, &via, &id, &submission)
            .await?,
    ))
}

/// One answer for bundles that ask the same thing (issue 29 item 5), each
/// settled through its own claim: the inbox's grouped row, or a program
/// grouping by `similar_key`.
#[utoipa::path(
    post,
    path = "/clarification/respond-alike",
    tag = "clarification",
    request_body = api::RespondAlike,
    responses(
        (status = 200, description = "Each bundle's outcome, in the order given: claimed, told the winner's answer, or closed unanswered (`status` null)", body = api::AlikeOutcomes),
        (status = 400, description = "An empty, too long or repeating list, bundles that are not alike, or an answer that does not fit them; nothing was claimed", body = ErrorBody),
        (status = 404, description = "A bundle unknown, or not yours to see; nothing was claimed", body = ErrorBody),
        (status = 422, description = "JSON of the wrong shape, or `reason` and `reject_reason` both given with different texts (N1), which a schema cannot state: the message names the field", body = ErrorBody),
    )
)]
pub async fn respond_alike(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Json(body): Json<api::RespondAlike>,
) -> Result<axum::Json<api::AlikeOutcomes>> {
    let ids: Vec<PendingId> = body.pending_ids.into_iter().map(PendingId::new).collect();
    let via = Via::channel(channel_of(&headers));
    let outcomes = state
        .lifecycle
        .resolving
        .resolve_alike(&caller, &via, &ids, &body.response)
        .await?;
    Ok(axum::Json(api::AlikeOutcomes { outcomes }))
}

/// Which channel a REST answer came through: `clarify`'s own client says
/// so; a browser's fetch carries `Sec-Fetch-Mode`, which other programs do
/// not send. Provenance describes, it does not authorize: who answered is
/// the authenticated caller.
fn channel_of(headers: &HeaderMap) -> Channel {
    let client = headers.get(super::CLIENT_HEADER).map(|v| v.as_bytes());
    if client == Some(b"cli") {
        Channel::Cli
    } else if client == Some(b"terminal") {
        // Only the asking agent may say so (`Resolving::resolve`).
        Channel::Terminal
    } else if headers.contains_key("sec-fetch-mode") {
        Channel::Browser
    } else {
        Channel::Rest
    }
}

/// The winner and every later attempt, oldest first: who, how, when and
/// with what outcome (a race explained after the fact).
#[utoipa::path(
    get,
    path = "/clarification/{id}/attempts",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id"), PageQuery),
    responses(
        (status = 200, description = "A page of the attempts log (keyset: `next_cursor` continues)", body = Attempts),
        (status = 400, description = "A `limit` or `cursor` that is not one", body = ErrorBody),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
    )
)]
pub async fn attempts(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
    Query(page): Query<PageQuery>,
) -> Result<axum::Json<Attempts>> {
    Ok(axum::Json(
        state
            .lifecycle
            .reading
            .attempts(&caller, &id, page.cursor(), page.limit()?)
            .await?,
    ))
}

/// The agent stopped waiting (it gave up, or moved on): the question stays
/// answerable and its answer will resume the agent. Only the asking agent
/// (or an unscoped caller) may detach.
#[utoipa::path(
    post,
    path = "/clarification/{id}/detach",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id")),
    responses(
        (status = 200, description = "Detached", body = api::Acknowledged),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
        (status = 409, description = "No longer active", body = ErrorBody),
    )
)]
pub async fn detach(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
) -> Result<axum::Json<api::Acknowledged>> {
    state.lifecycle.sessions.detach_as(&caller, &id).await?;
    Ok(axum::Json(api::Acknowledged {
        success: true,
        agent_disconnected: Some(true),
        status: None,
    }))
}

/// Sets who a bundle is for (issue 29 item 6): anyone who may see it may
/// (re)assign it; everyone may still answer it.
#[utoipa::path(
    post,
    path = "/clarification/{id}/assign",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id")),
    request_body = api::Assign,
    responses(
        (status = 200, description = "Assigned; the bundle as it now is", body = api::BundleView),
        (status = 400, description = "Not a user name (at most 64 characters, no control characters)", body = ErrorBody),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
        (status = 409, description = "No longer active", body = ErrorBody),
    )
)]
pub async fn assign(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
    Json(body): Json<api::Assign>,
) -> Result<axum::Json<api::BundleView>> {
    state
        .lifecycle
        .sessions
        .assign(&caller, &id, &body.assignee)
        .await?;
    let mut view = state
        .lifecycle
        .reading
        .read_collecting(&caller, &id)
        .await?;
    crate::markdown::bundle(&mut view.bundle);
    Ok(axum::Json(view))
}

/// Cancels.
#[utoipa::path(
    post,
    path = "/clarification/{id}/cancel",
    tag = "clarification",
    params(("id" = String, Path, description = "The bundle's pending_id")),
    responses(
        (status = 200, description = "Cancelled", body = api::Acknowledged),
        (status = 404, description = "No such bundle, or not yours to see", body = ErrorBody),
        (status = 409, description = "No longer active", body = ErrorBody),
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<PendingId>,
) -> Result<axum::Json<api::Acknowledged>> {
    state.lifecycle.sessions.cancel(&caller, &id).await?;
    Ok(axum::Json(api::Acknowledged {
        success: true,
        status: Some(clarify_core::Status::Cancelled),
        agent_disconnected: None,
    }))
}
