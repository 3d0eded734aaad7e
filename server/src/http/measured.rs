//! Every HTTP request counted for the operator's metrics (issue 49 item
//! 1): by route (the matched pattern, never the
//! path: a path may carry an answer link's token) and status, and timed.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::measure::Measure;

/// The middleware: counts and times each request after it is answered.
pub async fn record(State(measure): State<Measure>, request: Request, next: Next) -> Response {
    let route = super::route::of(&request).to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16().to_string();
    measure.count(
        "clarify_http_requests_total",
        &[("route", route.clone()), ("status", status)],
    );
    measure.observe(
        "clarify_http_request_seconds",
        &[("route", route)],
        started.elapsed(),
    );
    response
}
