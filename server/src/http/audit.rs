//! `GET /api/v1/audit` (issue 49 item 5): every question asked in a span
//! of time, who asked (task, session), who answered and how (channel,
//! client), when, what, and every attempt that lost, as JSON lines or
//! CSV, a page at a time (`X-Next-Cursor`). Only what the caller may see
//! (A1-A3); an admin (`clarify token create --admin`) sees every
//! workspace. Agents read no audit.

use axum::Extension;
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, HeaderName};
use axum::response::{IntoResponse, Response};
use clarify_core::{Cursor, ErrorBody, PendingId};
use serde::Deserialize;

use super::activity::TeamReads;
use super::audit_row::{jsonl, row};
use super::error::{Error, Result};
use super::extract::Query;
use crate::auth::Caller;
use crate::clock::parse_rfc3339;
use crate::db::audit;
use crate::lifecycle as domain;
use crate::state::AppState;

/// The header that carries the next page's cursor (absent on the last).
pub const NEXT_CURSOR: HeaderName = HeaderName::from_static("x-next-cursor");

/// Bundles a page by default, and at most: as every list pages (L10).
const PAGE: i64 = 50;
const MAX_PAGE: i64 = 200;

/// `?since=&until=&format=&limit=&cursor=`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Asked at or after this instant (RFC 3339); from the beginning when absent.
    since: Option<String>,
    /// Asked before this instant (RFC 3339); until now when absent.
    until: Option<String>,
    /// `jsonl` (one JSON object a line, the default) or `csv`.
    format: Option<String>,
    /// Bundles a page (a whole number): default 50, at most 200.
    limit: Option<String>,
    /// The previous page's `X-Next-Cursor`.
    cursor: Option<String>,
}

/// An export of questions and answers.
#[utoipa::path(
    get,
    path = "/audit",
    tag = "audit",
    params(AuditQuery),
    responses(
        (status = 200, description = "A page of bundles in the order asked: one JSON object a line (`AuditRow`), or CSV with a header row; `X-Next-Cursor` continues",
            content((String = "application/x-ndjson"), (String = "text/csv"))),
        (status = 400, description = "A `since`, `until`, `format`, `limit` or `cursor` that is not one", body = ErrorBody),
        (status = 401, description = "No credential, under --auth", body = ErrorBody),
        (status = 403, description = "An agent's token", body = ErrorBody),
        (status = 429, description = "Too many team-wide reads at once", body = ErrorBody),
    )
)]
pub async fn export(
    State(state): State<AppState>,
    Extension(reads): Extension<TeamReads>,
    caller: Caller,
    Query(query): Query<AuditQuery>,
) -> Result<Response> {
    let since = instant("since", query.since.as_deref())?.unwrap_or(0);
    let until = instant("until", query.until.as_deref())?.unwrap_or(i64::MAX);
    let csv = match query.format.as_deref().map(str::trim) {
        None | Some("" | "jsonl") => false,
        Some("csv") => true,
        Some(_) => return Err(Error::BadRequest("format: must be jsonl or csv".to_owned())),
    };
    // As every list reads it (L10): below 1 is the default, above the
    // most is clamped.
    let limit = super::extract::page_limit(query.limit.as_deref())?
        .filter(|n| *n >= 1)
        .map_or(PAGE, |n| n.min(MAX_PAGE));
    let after = match query.cursor.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(Cursor::decode(text).map_err(|e| Error::BadRequest(e.to_string()))?),
    };
    let (user, reader) =
        super::admin::reader(&state, &caller, "an agent's token reads no audit").await?;
    // Up to a page of bundle reads: held as a team-wide read.
    let _place = reads.take(&caller)?;
    let walk = audit::AuditQuery {
        user: user.as_deref(),
        since,
        until,
        after: after.as_ref().map(|c| (c.created_at, c.id.as_str())),
        limit,
    };
    let (keys, more) = audit::page(state.db().pool(), &walk)
        .await
        .map_err(domain::Error::from)?;
    let mut rows = Vec::with_capacity(keys.len());
    for key in &keys {
        let id = PendingId::new(key.pending_id.clone());
        let view = state.lifecycle.reading.read(&reader, &id).await?;
        let attempts = state
            .lifecycle
            .reading
            .attempts(&reader, &id, "", Some(100))
            .await?;
        rows.push(row(view, attempts.attempts, attempts.more));
    }
    let body = if csv {
        super::audit_csv::write(&rows)
    } else {
        jsonl(&rows)
    };
    let mut response = (
        [(
            CONTENT_TYPE,
            if csv {
                "text/csv; charset=utf-8"
            } else {
                "application/x-ndjson"
            },
        )],
        body,
    )
        .into_response();
    if let Some(last) = keys.last().filter(|_| more) {
        let next = Cursor {
            created_at: last.created_at,
            id: last.pending_id.clone(),
        }
        .encode();
        if let Ok(value) = next.parse() {
            response.headers_mut().insert(NEXT_CURSOR, value);
        }
    }
    Ok(response)
}

/// `text` as microseconds since the epoch, or a 400 naming `field`.
fn instant(field: &str, text: Option<&str>) -> Result<Option<i64>> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => parse_rfc3339(text).map(Some).ok_or_else(|| {
            Error::BadRequest(format!(
                "{field}: not an RFC 3339 time (2026-12-06T10:00:00Z)"
            ))
        }),
    }
}
