//! `GET /metrics` (issue 49 item 1): the operator's figures in
//! Prometheus's text format. Off unless `--metrics` (on the API's own
//! port, where under --auth it takes an admin's credential, like the
//! audit) or `--metrics-listen ADDR` (a port of its own, for a network
//! only the scraper reaches). The gauges are read at each scrape.

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use super::error::{Error, Result};
use crate::auth::Caller;
use crate::channels::keeper::Link;
use crate::clock::now_micros;
use crate::db::{gauges, users};
use crate::lifecycle as domain;
use crate::state::AppState;

/// Prometheus's text exposition format, version 0.0.4.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The figures, for a caller on the API's port: anyone without auth, an
/// admin with it.
pub async fn scrape(State(state): State<AppState>, caller: Caller) -> Result<Response> {
    match &caller {
        Caller::Unscoped => {}
        Caller::User(id) => {
            let admin = users::is_admin(state.db().pool(), id.as_str())
                .await
                .map_err(domain::Error::from)?;
            if !admin {
                return Err(Error::Forbidden("only an admin reads the metrics"));
            }
        }
        Caller::Agent(_) => return Err(Error::Forbidden("only an admin reads the metrics")),
    }
    exposition(&state).await
}

/// The figures, with the gauges read now.
///
/// # Errors
/// Database errors.
pub async fn exposition(state: &AppState) -> Result<Response> {
    let measure = &state.measure;
    let pool = state.db().pool();
    let waiting = gauges::questions_waiting(pool)
        .await
        .map_err(domain::Error::from)?;
    measure.set("clarify_questions_waiting", &[], waiting as f64);
    measure.set(
        "clarify_agents_waiting",
        &[],
        state.lifecycle.agents_waiting() as f64,
    );
    let now = now_micros();
    let mut by_channel: std::collections::BTreeMap<&str, (i64, i64)> =
        ["webhook", "ntfy", "slack", "telegram", "discord"]
            .into_iter()
            .map(|c| (c, (0, now)))
            .collect();
    for (target, count, oldest) in gauges::notices_queued(pool)
        .await
        .map_err(domain::Error::from)?
    {
        let entry = by_channel
            .entry(crate::channels::kind_of(&target))
            .or_insert((0, now));
        entry.0 += count;
        entry.1 = entry.1.min(oldest);
    }
    for (channel, (count, oldest)) in by_channel {
        let labels = [("channel", channel.to_owned())];
        measure.set("clarify_notices_queued", &labels, count as f64);
        let age = (now - oldest).max(0) as f64 / 1e6;
        measure.set("clarify_notices_oldest_seconds", &labels, age);
    }
    for (channel, link) in state.statuses.links() {
        let up = if link == Link::Up { 1.0 } else { 0.0 };
        measure.set("clarify_channel_up", &[("channel", channel.to_owned())], up);
    }
    Ok(([(CONTENT_TYPE, TEXT_FORMAT)], measure.render()).into_response())
}
