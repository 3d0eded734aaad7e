//! The route a request matched, which logs name instead of its URI: a URI
//! may carry a capability (an answer link's token), and logs are read by
//! more people than may answer (issue 45 item 7-P2).

use axum::extract::MatchedPath;
use axum::http::Request;

/// The route `request` matched (`/answer/{token}`), or `unmatched` (a 404,
/// whose path is whatever the client sent, so not logged either).
#[must_use]
pub fn of<B>(request: &Request<B>) -> &str {
    request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
}
