//! `GET /api/v1/pending`: the REST twin of `list_pending_questions_kandev`
//! (L1–L16), so a program without MCP, and the overlay's inbox, can list
//! what waits.

use axum::extract::State;
use axum::response::IntoResponse;
use clarify_core::PendingPage;
use serde::Deserialize;

use super::error::Result;
use super::extract::{Query, page_limit};
use crate::auth::Caller;
use crate::lifecycle::discovery::PendingArgs;
use crate::state::AppState;

/// `?workspace_id=&created_since=&cursor=&limit=`, read as text so that a
/// bad value gets our error naming it (L13), as the MCP tool does.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PendingQuery {
    /// Only this workspace's bundles.
    workspace_id: Option<String>,
    /// RFC 3339: only bundles asked at or after this instant.
    created_since: Option<String>,
    /// The previous page's `next_cursor`.
    cursor: Option<String>,
    /// Page size (a whole number): default 50, at most 200.
    limit: Option<String>,
}

/// Every active bundle you may answer, oldest first, a page at a time.
#[utoipa::path(
    get,
    path = "/pending",
    tag = "clarification",
    params(PendingQuery),
    responses(
        (status = 200, description = "A page of the bundles waiting for an answer, oldest first", body = PendingPage),
    )
)]
pub async fn list_pending(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<PendingQuery>,
) -> Result<impl IntoResponse> {
    let args = PendingArgs {
        workspace_id: query.workspace_id.unwrap_or_default(),
        created_since: query.created_since.unwrap_or_default(),
        cursor: query.cursor.unwrap_or_default(),
        limit: page_limit(query.limit.as_deref())?,
    };
    let mut page = state.lifecycle.reading.list_pending(&caller, &args).await?;
    page.bundles.iter_mut().for_each(crate::markdown::bundle);
    Ok(axum::Json(page))
}
