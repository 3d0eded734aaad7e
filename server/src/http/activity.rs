//! The Activity figures (issue 49 item 2): `GET /api/v1/activity` as
//! JSON for a program, `GET /activity` as a page for a person. Both only
//! what the caller may see (A1-A3), an admin everything; an agent neither.
//! Team-wide reads (this and the audit export) hold a place while they
//! read, so no one user's reads can take the database from the others.

use std::sync::Arc;

use axum::extract::State;
use axum::{Extension, Json};
use clarify_core::ErrorBody;
use serde::Deserialize;

use super::error::{Error, Result};
use super::extract::Query;
use crate::activity::{self, Activity, DAYS, MAX_DAYS};
use crate::auth::Caller;
use crate::quota::{Place, Places, Refusals};
use crate::state::AppState;

/// Team-wide reads one user may run at once, and the server in all.
const READS_PER_USER: usize = 2;
const READS_TOTAL: usize = 8;

/// The places team-wide reads hold (the Activity figures, an audit page).
#[derive(Debug, Clone)]
pub struct TeamReads(Arc<Places>);

impl Default for TeamReads {
    fn default() -> Self {
        Self(Places::new(
            READS_PER_USER,
            READS_TOTAL,
            Refusals {
                user: "you are already reading two team-wide views (activity, audit) at once: \
                       wait for one to finish",
                server: "the server is reading as many team-wide views as it will at once: \
                         try again in a moment",
            },
        ))
    }
}

impl TeamReads {
    /// A place for `caller`'s read, or a 429 saying whose cap is full.
    ///
    /// # Errors
    /// 429 when `caller` or the server holds all the places.
    pub fn take(&self, caller: &Caller) -> Result<Place> {
        self.0
            .open(caller)
            .map_err(|full| Error::TooMany(self.0.reason(full).to_owned()))
    }
}

/// `?days=`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ActivityQuery {
    /// Days to cover, ending today (UTC): a whole number from 1 to 90, 14
    /// when absent.
    days: Option<String>,
}

impl ActivityQuery {
    /// The days asked for, or a 400 naming `days`.
    pub fn days(&self) -> Result<u32> {
        // Not trimmed: the document allows digits or nothing, and a
        // space or a control character is neither (Schemathesis sent `\v`).
        match self.days.as_deref() {
            None | Some("") => Ok(DAYS),
            Some(text) => text
                .parse::<u32>()
                .ok()
                .filter(|d| (1..=MAX_DAYS).contains(d) && text.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    Error::BadRequest(format!("days: must be a whole number from 1 to {MAX_DAYS}"))
                }),
        }
    }
}

/// The team's activity: questions per day, time to answer, answers by
/// channel and person, who asks most, what waits longest.
#[utoipa::path(
    get,
    path = "/activity",
    tag = "audit",
    params(ActivityQuery),
    responses(
        (status = 200, description = "The figures over the days asked for", body = Activity),
        (status = 400, description = "A `days` that is not a whole number from 1 to 90", body = ErrorBody),
        (status = 401, description = "No credential, under --auth", body = ErrorBody),
        (status = 403, description = "An agent's token", body = ErrorBody),
        (status = 429, description = "Too many team-wide reads at once", body = ErrorBody),
    )
)]
pub async fn figures(
    State(state): State<AppState>,
    Extension(reads): Extension<TeamReads>,
    caller: Caller,
    Query(query): Query<ActivityQuery>,
) -> Result<Json<Activity>> {
    let days = query.days()?;
    Ok(Json(read(&state, &reads, &caller, days).await?))
}

/// The figures `caller` may see over `days` days, under a place.
///
/// # Errors
/// 403 for an agent, 429 when the places are taken, database errors.
pub async fn read(
    state: &AppState,
    reads: &TeamReads,
    caller: &Caller,
    days: u32,
) -> Result<Activity> {
    let (user, reader) =
        super::admin::reader(state, caller, "an agent's token reads no activity").await?;
    let _place = reads.take(caller)?;
    Ok(activity::gather(
        state.db(),
        &state.lifecycle.reading,
        &reader,
        user.as_deref(),
        days,
    )
    .await?)
}
