//! Every HTTP request counted for the operator's metrics (issue 49 item
//! 1): by route (the matched pattern, never the
//! path: a path may carry an answer link's token) and status, and timed.

use std::time::Instant;

use axum::extract::Request;
use axum::response::Response;

use crate::measure::Measure;

/// The layer: counts and times each request once it is answered.
pub fn layer(measure: Measure) -> super::gate::Gate<super::gate::Observe<Counted>> {
    super::gate::Gate(super::gate::Observe(Counted(measure)))
}

/// [`layer`]'s observer.
#[derive(Clone)]
pub struct Counted(Measure);

impl super::gate::Observer for Counted {
    /// The route, and when the request came.
    type Seen = (String, Instant);

    fn start(&self, request: &Request) -> Self::Seen {
        (super::route::of(request).to_owned(), Instant::now())
    }

    fn finish(&self, (route, started): Self::Seen, response: &Response) {
        let status = response.status().as_u16().to_string();
        self.0.count(
            "clarify_http_requests_total",
            &[("route", route.clone()), ("status", status)],
        );
        self.0.observe(
            "clarify_http_request_seconds",
            &[("route", route)],
            started.elapsed(),
        );
    }
}
