//! Headers every response carries so that a browser never runs, sniffs or
//! frames what we send in a way we did not mean: no MIME sniffing, no
//! framing by other pages (clickjacking the overlay's buttons), no referrer
//! leaking ids, and a default CSP that allows nothing (JSON needs nothing).
//! The overlay's page sets its own CSP (`web_assets::PAGE_CSP`).

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// What responses get when the handler set nothing else.
const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Adds the headers a response lacks (the router's stack runs this on
/// every response).
pub fn add(mut response: Response) -> Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CONTENT_SECURITY_POLICY, DEFAULT_CSP),
    ] {
        headers
            .entry(name)
            .or_insert_with(|| HeaderValue::from_static(value));
    }
    response
}
