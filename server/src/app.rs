//! The composition root: every surface assembled into one [`Router`], the
//! whole middleware stack in the order a request meets it, and [`serve`].
//!
//! A request passes, outermost first:
//!
//! 1. CORS (only with `--cors-origin`: split-origin development);
//! 2. a request id (kept when the client sent one), then the trace span
//!    that carries it, then the id echoed on the response;
//! 3. compression of the response;
//! 4. the security headers every response carries (`http::security_headers`);
//! 5. the same-origin policy (`Host` and `Origin`, DNS rebinding and
//!    cross-site requests: `http::same_origin`), before any route;
//! 6. per surface: the identity layer (`http::identity`, resolving the
//!    [`Caller`](crate::auth::Caller) once) on `/api/v1`'s protected routes
//!    and `/mcp`; `/mcp/agent` takes an agent token only; the MCP
//!    surfaces' body limits and session binding (`mcp::routes`);
//! 7. the handler.

use std::future::Future;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use axum::{Json, Router, routing::get};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::{compression::CompressionLayer, trace::DefaultOnResponse, trace::TraceLayer};

use crate::http::same_origin::{self, SameOrigin};
use crate::http::{self, error::Error, security_headers};
use crate::state::AppState;
use crate::{mcp, web_assets};

/// Every route the server answers, behind the middleware stack above.
pub fn app(state: AppState) -> Router {
    let origin = SameOrigin::new(
        &state.config.allowed_hosts,
        state.config.cors_origin.as_deref(),
        state.config.public_url.as_deref(),
    );
    let cors = state.config.cors_origin.as_deref().map(cors_layer);
    let routes = Router::new()
        .route("/healthz", get(healthz))
        .merge(http::routes(&state))
        .merge(http::answer_link::routes())
        .merge(http::integrations::routes())
        .merge(mcp::routes(&state))
        .merge(web_assets::routes(
            channels_down(&state),
            state
                .oidc
                .as_ref()
                .map(|oidc| oidc.provider_name())
                .as_deref(),
        ))
        .merge(metrics_route(&state))
        // Every other path: a 404, as a page for a browser, else in the
        // error shape like every other error.
        .fallback(not_found);
    // One layer of the whole stack, not a layer each: axum boxes a route's
    // future once per `Router::layer`, with room for the request in each,
    // so a stack of ten cost a long wait ~2.5 KiB more (issue 50, massif).
    // Applied to the routes, the stack runs after routing: the span and
    // the metrics see the route.
    let stack = ServiceBuilder::new()
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                // The span stays at info, so that what a request logs carries
                // its id; the line per request is debug (`--log-level
                // debug`): by default a person sees the listening line, the
                // demo's link and warnings, not a scroll of requests.
                .on_response(DefaultOnResponse::new().level(tracing::Level::DEBUG))
                .on_failure(on_failure),
        )
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(CompressionLayer::new())
        .map_response(security_headers::add)
        // Each request counted by route once someone may scrape the figures.
        .option_layer(
            state
                .config
                .metrics
                .then(|| http::measured::layer(state.measure.clone())),
        )
        .layer(same_origin::layer(origin));
    let router = routes.layer(stack).with_state(state);
    match cors {
        Some(cors) => router.layer(cors),
        None => router,
    }
}

fn request_span<B>(request: &Request<B>) -> tracing::Span {
    let id = request
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    // The route, never the URI: `/answer/{token}`, not the token (every
    // layer here runs after routing, so the route is known).
    let route = http::route::of(request);
    tracing::info_span!("request", method = %request.method(), route, request_id = %id)
}

/// Split-origin development: the one configured origin may call the API with
/// credentials; every other origin gets no CORS headers.
fn cors_layer(origin: &str) -> CorsLayer {
    let origin = HeaderValue::from_str(origin).unwrap_or_else(|_| HeaderValue::from_static("null"));
    CorsLayer::new()
        .allow_origin(AllowOrigin::list([origin]))
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
    let config = &state.config;
    let limits = crate::serve::Limits {
        cap: config
            .max_connections
            .unwrap_or_else(|| crate::serve::connection_cap(crate::serve::raise_file_limit())),
        header_timeout: config
            .header_timeout
            .unwrap_or(crate::serve::HEADER_TIMEOUT),
        body_timeout: config.body_timeout.unwrap_or(crate::serve::BODY_TIMEOUT),
    };
    let admission = crate::serve::Admission::new(limits.cap);
    let held = admission.clone();
    #[allow(clippy::cast_precision_loss)] // connections far below 2^52
    state.measure.probe(
        "clarify_connections_held",
        Vec::new(),
        Box::new(move || Some(held.held() as f64)),
    );
    let runtime = tokio::runtime::Handle::current().metrics();
    #[allow(clippy::cast_precision_loss)] // tasks far below 2^52
    state.measure.probe(
        "clarify_tasks_alive",
        Vec::new(),
        Box::new(move || Some(runtime.num_alive_tasks() as f64)),
    );
    let streams = state.shutdown.clone();
    crate::serve::run(listener, app(state), (limits, admission), streams, shutdown).await
}

/// What an unknown path answers: a person's browser (a GET that accepts
/// HTML, outside the API) gets the page, with 404, and the page says "not
/// found" in the app's own look (issue 46 item 10); a program gets the
/// error shape every other error has.
async fn not_found(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path();
    let browser = method == Method::GET
        && !["/api/", "/mcp", "/assets/"]
            .iter()
            .any(|prefix| path.starts_with(prefix))
        && headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"));
    if browser {
        (StatusCode::NOT_FOUND, web_assets::index().await).into_response()
    } else {
        Error::NotFound("route").into_response()
    }
}

/// The server is up, and what each channel's connection is doing (issue
/// 48 item 4): a person or a probe sees a chat that is down.
async fn healthz(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "status": "ok", "channels": state.statuses.to_json() }))
}

/// `GET /metrics` on the API's port with `--metrics`, behind the identity
/// layer (an admin's credential under --auth); nothing otherwise.
fn metrics_route(state: &AppState) -> Router<AppState> {
    if !state.config.metrics {
        return Router::new();
    }
    Router::new()
        .route("/metrics", get(http::metrics::scrape))
        .route_layer(http::identity::layer(state.clone()))
}

/// `--metrics-listen`: `/metrics` alone, without a credential, until the
/// server stops.
pub async fn serve_metrics(listener: TcpListener, state: AppState) {
    let shutdown = state.shutdown.clone();
    let app = Router::new().route(
        "/metrics",
        get(|State(state): State<AppState>| async move { http::metrics::exposition(&state).await }),
    );
    let app = app.with_state(state);
    if let Err(error) = axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
    {
        tracing::warn!(%error, "the metrics listener stopped");
    }
}

/// The channels that are down, for the page's banner (issue 48 item 4).
fn channels_down(state: &AppState) -> web_assets::Banner {
    let statuses = state.statuses.clone();
    Arc::new(move || statuses.down())
}

/// A failed response, logged as an error, but for a long poll that ended
/// without an answer: that 504 is the contract (A5a), and a person running
/// the demo saw an ERROR line every 25 seconds (issue 29).
fn on_failure(
    class: tower_http::classify::ServerErrorsFailureClass,
    latency: std::time::Duration,
    _span: &tracing::Span,
) {
    use tower_http::classify::ServerErrorsFailureClass::StatusCode;
    let ms = latency.as_millis();
    match class {
        StatusCode(axum::http::StatusCode::GATEWAY_TIMEOUT) => {
            tracing::debug!(latency_ms = ms, "a long poll ended without an answer");
        }
        other => tracing::error!(classification = %other, latency_ms = ms, "response failed"),
    }
}
