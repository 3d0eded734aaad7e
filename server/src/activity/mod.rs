//! What a team's questions have been doing (issue 49 item 2): questions
//! per day, time to answer, answers by channel and by person, who asks
//! most, what waits longest — for the Activity page and its JSON, only
//! what the viewer may see (A1-A3; an admin sees every workspace).

mod figures;

use clarify_core::PendingBundle;
use serde::Serialize;

pub use figures::{Count, Day, TOP, percentile};

use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::{Db, activity};
use crate::lifecycle::discovery::PendingArgs;
use crate::lifecycle::{Reading, Result};

/// Days shown by default, and at most.
pub const DAYS: u32 = 14;
pub const MAX_DAYS: u32 = 90;

/// Bundles read for one view at most, newest first: the figures then
/// cover these, and say so (`sampled`), so one view's cost is bounded
/// however busy the team was.
pub const CAP: i64 = 20_000;

/// What waits longest, shown at most.
const WAITING: i64 = 5;

/// A team's activity over the last `days` days (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Activity {
    /// Days covered, ending today (UTC).
    pub days: u32,
    /// Bundles asked in the span.
    pub asked: u64,
    /// Of those, answered or declined by a person.
    pub answered: u64,
    /// More than the cap (20,000) were asked: the figures cover the
    /// newest 20,000.
    pub sampled: bool,
    /// Each day, oldest first.
    pub per_day: Vec<Day>,
    /// Answers by channel (`browser`, `slack`, …), most first (top 10).
    pub channels: Vec<Count>,
    /// Answers by person, most first (top 10).
    pub people: Vec<Count>,
    /// The tasks that asked most (top 10).
    pub tasks: Vec<Count>,
    /// The agents (sessions) that asked most (top 10).
    pub agents: Vec<Count>,
    /// What waits longest now, longest first (5 at most).
    pub waiting: Vec<Waiting>,
}

/// A bundle waiting now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Waiting {
    pub pending_id: String,
    pub task_id: String,
    /// Its first question's prompt.
    pub prompt: String,
    /// Who it is for, `""` for anyone.
    pub assignee: String,
    /// When it was asked (RFC 3339).
    pub asked_at: String,
    /// For how long it has waited.
    pub waiting_seconds: i64,
}

/// The activity `reader` may see over `days` days: `user` is whose
/// visibility applies (`None`: everything, as `reader` is then unscoped).
///
/// # Errors
/// Database errors.
pub async fn gather(
    db: &Db,
    reading: &Reading,
    reader: &Caller,
    user: Option<&str>,
    days: u32,
) -> Result<Activity> {
    let days = days.clamp(1, MAX_DAYS);
    let now = now_micros();
    let since = figures::span_start(now, days);
    let rows = activity::asked_since(db.pool(), db.backend(), user, since, CAP + 1).await?;
    let sampled = rows.len() > usize::try_from(CAP).unwrap_or(usize::MAX);
    let rows = &rows[..rows.len().min(usize::try_from(CAP).unwrap_or(usize::MAX))];
    let f = figures::figures(rows, now, days);
    let oldest = reading
        .list_pending(
            reader,
            &PendingArgs {
                limit: Some(WAITING),
                ..PendingArgs::default()
            },
        )
        .await?;
    Ok(Activity {
        days,
        asked: f.asked,
        answered: f.answered,
        sampled,
        per_day: f.per_day,
        channels: f.channels,
        people: f.people,
        tasks: f.tasks,
        agents: f.agents,
        waiting: oldest.bundles.iter().map(waiting).collect(),
    })
}

fn waiting(bundle: &PendingBundle) -> Waiting {
    Waiting {
        pending_id: bundle.pending_id.clone(),
        task_id: bundle.task_id.clone(),
        prompt: bundle
            .questions
            .first()
            .map(|q| q.prompt.clone())
            .unwrap_or_default(),
        assignee: bundle.assignee.clone(),
        asked_at: bundle.created_at.clone(),
        waiting_seconds: bundle.age_seconds,
    }
}
