//! The web overlay's static files, embedded into the binary at build time.
//!
//! `build.rs` compiles `clarify-web` to wasm and runs wasm-bindgen into
//! `OUT_DIR/web`; embedding the result keeps the server a single file to
//! deploy.

use axum::{
    Router,
    http::header::{CACHE_CONTROL, CONTENT_TYPE},
    response::{IntoResponse, Response},
    routing::get,
};

const INDEX_HTML: &str = include_str!("../assets/index.html");
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
        .route("/assets/clarify_web.js", get(script))
        .route("/assets/clarify_web_bg.wasm", get(wasm))
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML.as_bytes())
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
