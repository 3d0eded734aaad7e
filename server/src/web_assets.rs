//! The web overlay's static files, embedded into the binary at build time.
//!
//! `build.rs` compiles `clarify-web` to wasm and runs wasm-bindgen into
//! `OUT_DIR/web`; embedding the result keeps the server a single file to
//! deploy.

use axum::{
    Router,
    http::HeaderValue,
    http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE},
    response::{IntoResponse, Response},
    routing::get,
};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const BOOT_JS: &[u8] = include_bytes!("../assets/boot.js");
const STYLES: &[u8] = include_bytes!("../assets/clarify.css");
const WEB_JS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/web/clarify_web.js"));
const WEB_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/web/clarify_web_bg.wasm"));

// The asset names are not content-hashed yet, so every load must revalidate
// or a browser could pair a new page with a stale wasm module.
const CACHE: &str = "no-cache";

/// Routes for the overlay: the page itself under every client-side path, and
/// the wasm-bindgen output under `/assets`.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route("/", get(index))
        // Client-side routes: the page decides what to show from the URL.
        .route("/t/{id}", get(index))
        .route("/s/{id}", get(index))
        .route("/login", get(index))
        .route("/assets/boot.js", get(boot))
        .route("/assets/clarify.css", get(styles))
        .route("/assets/clarify_web.js", get(script))
        .route("/assets/clarify_web_bg.wasm", get(wasm))
}

async fn index() -> Response {
    let mut page = asset("text/html; charset=utf-8", INDEX_HTML.as_bytes());
    page.headers_mut().insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(crate::http::security_headers::PAGE_CSP),
    );
    page
}

async fn boot() -> Response {
    asset("text/javascript", BOOT_JS)
}

async fn styles() -> Response {
    asset("text/css; charset=utf-8", STYLES)
}

async fn script() -> Response {
    asset("text/javascript", WEB_JS)
}

async fn wasm() -> Response {
    asset("application/wasm", WEB_WASM)
}

fn asset(content_type: &'static str, body: &'static [u8]) -> Response {
    ([(CONTENT_TYPE, content_type), (CACHE_CONTROL, CACHE)], body).into_response()
}
