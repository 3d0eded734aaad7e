//! The binary serves the overlay it embeds: page, JS glue and wasm.

use clarify_tests::TestServer;

#[tokio::test]
async fn serves_the_overlay_and_its_wasm() {
    let server = TestServer::start().await;
    let client = server.client();

    let page = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("/assets/clarify_web.js")
    );

    let wasm = client
        .get(server.url("/assets/clarify_web_bg.wasm"))
        .send()
        .await
        .unwrap();
    assert_eq!(wasm.status(), 200);
    assert_eq!(wasm.headers()["content-type"], "application/wasm");
    let bytes = wasm.bytes().await.unwrap();
    assert!(
        bytes.starts_with(b"\0asm"),
        "a wasm module, not a placeholder"
    );

    let js = client
        .get(server.url("/assets/clarify_web.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status(), 200);

    for spa in ["/t/some-task", "/s/some-session"] {
        let page = client.get(server.url(spa)).send().await.unwrap();
        assert_eq!(page.status(), 200, "{spa}");
    }
    let missing = client
        .get(server.url("/no/such/page"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    server.stop().await;
}

#[tokio::test]
async fn health_check_answers_json() {
    let server = TestServer::start().await;
    let body: serde_json::Value = server
        .client()
        .get(server.url("/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body, serde_json::json!({"status": "ok"}));
    server.stop().await;
}
