//! Clarify's server: the HTTP API, the MCP surfaces and the web overlay,
//! assembled into one axum [`Router`] by [`app`] and run by [`serve`].

pub mod auth;
pub mod cli;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod db;
pub mod events;
pub mod http;
pub mod ids;
pub mod lifecycle;
pub mod mcp;
mod state;
pub mod waiters;
mod web_assets;

use std::future::Future;

use axum::serve::ListenerExt as _;
use axum::{Json, Router, routing::get};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::{compression::CompressionLayer, trace::TraceLayer};

pub use ipnet::IpNet;
pub use state::{AppState, Config};

/// Every route the server answers, with compression and request tracing.
pub fn app(state: AppState) -> Router {
    let cors = state.config.cors_origin.as_deref().map(cors_layer);
    let routes = Router::new()
        .route("/healthz", get(healthz))
        .merge(http::routes(&state))
        .merge(mcp::routes(&state))
        .merge(web_assets::routes())
        // Every other path: a 404 in the error shape, like every other error.
        .fallback(|| async { http::error::Error::NotFound("route") })
        // Before any route: a request from elsewhere reaches no handler.
        .layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(http::same_origin::SameOrigin::new(
                &state.config.allowed_hosts,
                state.config.cors_origin.as_deref(),
            )),
            http::same_origin::enforce,
        ));
    let router = http::security_headers::apply(routes)
        .layer(CompressionLayer::new())
        // Every request gets an x-request-id (kept when the client sent one),
        // logged on its span and echoed in the response.
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(|request: &axum::http::Request<_>| {
            let id = request
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            tracing::info_span!("request", method = %request.method(), uri = %request.uri(), request_id = %id)
        // The span stays at info, so that what a request logs carries its id;
        // the line per request is debug (`--log-level debug`): by default a
        // person sees the listening line, the demo's link and warnings, not
        // a scroll of requests.
        }).on_response(tower_http::trace::DefaultOnResponse::new().level(tracing::Level::DEBUG)))
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .with_state(state);
    match cors {
        Some(cors) => router.layer(cors),
        None => router,
    }
}

/// Split-origin development: the one configured origin may call the API with
/// credentials; every other origin gets no CORS headers.
fn cors_layer(origin: &str) -> tower_http::cors::CorsLayer {
    use axum::http::{Method, header};
    let origin = axum::http::HeaderValue::from_str(origin)
        .unwrap_or_else(|_| axum::http::HeaderValue::from_static("null"));
    tower_http::cors::CorsLayer::new()
        .allow_origin(tower_http::cors::AllowOrigin::list([origin]))
        .allow_credentials(true)
        .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
        .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then lets requests
/// in flight finish.
///
/// The caller binds the listener so it can learn the real address first
/// (port 0 picks a free one).
///
/// # Errors
///
/// Whatever the underlying accept loop reports.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let token = state.shutdown.clone();
    // A make-service that hands each connection a clone of the one router:
    // serving the `Router` itself would rebuild every route for every
    // connection (axum calls `with_state` per connection), which measured
    // 160 KiB per open connection (`tests/benches/waiters.rs`).
    // Responses leave in several small writes (an SSE stream's priming
    // event, the data, the last chunk): with Nagle's algorithm on, every
    // keep-alive client waited ~40 ms for its own delayed ACK before the
    // later writes went out (issue 17; `tests/benches/keepalive.rs`).
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY not set on a connection");
        }
    });
    axum::serve(listener, app(state).into_make_service())
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Long-lived streams would otherwise hold graceful shutdown open
            // forever; requests in flight still finish.
            token.cancel();
        })
        .await
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}
