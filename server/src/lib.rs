//! Clarify's server: the HTTP API, the MCP surfaces and the web overlay,
//! assembled into one axum [`Router`] by [`app`] and run by [`serve()`].

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
pub mod quota;
pub mod serve;
mod state;
pub mod waiters;
mod web_assets;

use std::future::Future;

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
    let cap = state
        .config
        .max_connections
        .unwrap_or_else(|| serve::connection_cap(serve::raise_file_limit()));
    let streams = state.shutdown.clone();
    serve::run(listener, app(state), cap, streams, shutdown).await
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}
