//! The router driven directly with `oneshot`, no socket: what every
//! response carries and what is refused before any handler runs.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use clarify_server::{AppState, Config, app};
use clarify_tests::TestDatabase;
use tower::ServiceExt as _;

async fn router(config: Config) -> (axum::Router, TestDatabase) {
    let database = TestDatabase::create().await;
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    let state = AppState::new(db, config).await.unwrap();
    (app(state), database)
}

fn get(uri: &str, host: &str) -> Request<Body> {
    Request::get(uri)
        .header("host", host)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn health_unknown_routes_and_refusals_all_carry_the_security_headers() {
    let (router, _database) = router(Config::default()).await;
    for (request, expected) in [
        (get("/healthz", "127.0.0.1:7420"), StatusCode::OK),
        (get("/no/such/route", "localhost"), StatusCode::NOT_FOUND),
        (get("/healthz", "rebind.evil"), StatusCode::FORBIDDEN),
    ] {
        let uri = request.uri().clone();
        let response = router.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), expected, "{uri}");
        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff", "{uri}");
        assert_eq!(headers["x-frame-options"], "DENY", "{uri}");
        assert!(headers.contains_key("x-request-id"), "{uri}");
    }
}

#[tokio::test]
async fn with_auth_on_an_api_route_without_identity_is_401_with_a_challenge() {
    let (router, _database) = router(Config {
        auth: true,
        ..Config::default()
    })
    .await;
    let response = router
        .oneshot(get("/api/v1/tasks", "localhost"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"], "authentication required");
}
