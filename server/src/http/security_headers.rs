//! Headers every response carries so that a browser never runs, sniffs or
//! frames what we send in a way we did not mean: no MIME sniffing, no
//! framing by other pages (clickjacking the overlay's buttons), no referrer
//! leaking ids, and a default CSP that allows nothing (JSON needs nothing).
//! The overlay's page sets its own CSP (`web_assets::PAGE_CSP`).

use axum::Router;
use axum::http::{HeaderName, HeaderValue, header};
use tower_http::set_header::SetResponseHeaderLayer;

/// What responses get when the handler set nothing else.
const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Adds the headers to every response of `router`.
pub fn apply<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    let headers: [(HeaderName, &'static str); 4] = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CONTENT_SECURITY_POLICY, DEFAULT_CSP),
    ];
    headers.into_iter().fold(router, |router, (name, value)| {
        router.layer(SetResponseHeaderLayer::if_not_present(
            name,
            HeaderValue::from_static(value),
        ))
    })
}
