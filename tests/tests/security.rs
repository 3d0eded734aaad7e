//! Nothing outside can turn the server against its host or its users
//! (issue 12). Each test reproduces one attack through the real server:
//! a resume that runs a program or reaches an internal address, a web page
//! driving the API (DNS rebinding, cross-site requests and WebSockets),
//! another reader taking the agent's delivery, an agent token reading a
//! sibling session, a borrowed MCP session, and the missing headers.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::{EventSocket, Receiver, TestServer};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

fn question() -> Value {
    json!([{"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}])
}

fn pick(option: &str) -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": [option]}]})
}

/// A scratch directory for files a resume command writes.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "clarify-security-{name}-{}",
        clarify_server::ids::new_id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Waits (at most 10 s) until `done` holds, checking every 20 ms: for work
/// a child process does on its own time.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never happened: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn allowing_sh() -> Config {
    Config {
        allowed_resume_commands: vec!["/bin/sh".into()],
        ..Config::default()
    }
}

/// Asks on a new session of `server` whose resume command is
/// `/bin/sh -c script out`; returns the pending id.
async fn ask_resumed_by_sh(server: &TestServer, script: &str, out: &std::path::Path) -> String {
    let command = json!(["/bin/sh", "-c", script, out]);
    let (_, session, agent) = server.session(Some(json!({"command": command}))).await;
    server.ask(&session, &agent, question()).await
}

async fn status_of(server: &TestServer, pending: &str) -> (Value, Value) {
    let (code, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(code, 200, "{view}");
    (view["status"].clone(), view["active"].clone())
}

#[tokio::test]
async fn a_resume_command_is_refused_unless_the_operator_allowed_its_program() {
    let server = TestServer::start().await;
    let (status, task) = server.post("/tasks", &json!({"title": "t"})).await;
    assert_eq!(status, 201);
    let sessions = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    for command in [
        json!(["/bin/sh", "-c", "id > /tmp/clarify-pwned"]),
        json!(["sh", "-c", "id"]),
        json!(["/usr/bin/env"]),
    ] {
        let (status, body) = server
            .post(&sessions, &json!({"resume": {"command": command}}))
            .await;
        assert_eq!(status, 400, "{command}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("resume.command:"),
            "{body}"
        );
    }
    let (_, listed) = server.get(&sessions).await;
    assert_eq!(listed["sessions"], json!([]), "nothing was created");
    server.stop().await;
}

#[tokio::test]
async fn an_allowed_resume_command_runs_with_the_prompt_on_its_stdin() {
    let server = TestServer::start_with(allowing_sh()).await;
    let dir = scratch("allowed");
    let out = dir.join("prompt");
    let script = "cat > \"$0.tmp\" && mv \"$0.tmp\" \"$0\"";
    let pending = ask_resumed_by_sh(&server, script, &out).await;
    let (status, won) = server.respond(&pending, &pick("q1_opt2")).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    eventually("the command wrote its prompt", || out.exists()).await;
    let prompt = std::fs::read_to_string(&out).unwrap();
    assert!(
        prompt.contains("Please continue with this information."),
        "{prompt}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_program_allowed_at_creation_but_no_longer_is_refused_at_dispatch() {
    let allowing = TestServer::start_with(allowing_sh()).await;
    let dir = scratch("revoked");
    let out = dir.join("ran");
    let pending = ask_resumed_by_sh(&allowing, "touch \"$0\"", &out).await;
    // Restarted without the flag: the stored command may not run any more.
    let server = allowing.replica_with(Config::default()).await;
    allowing.stop().await;
    let (status, body) = server.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 500, "{body}");
    assert!(!out.exists(), "the program ran");
    assert_eq!(
        status_of(&server, &pending).await,
        (json!("pending"), json!(true))
    );
    server.stop().await;
}

#[tokio::test]
async fn a_resume_command_is_killed_after_its_time_limit() {
    let server = TestServer::start_with(Config {
        resume_command_timeout: Some(Duration::from_millis(300)),
        ..allowing_sh()
    })
    .await;
    let dir = scratch("limit");
    let pid_file = dir.join("pid");
    // Never reads its stdin, never ends on its own.
    let script = "echo $$ > \"$0.tmp\" && mv \"$0.tmp\" \"$0\" && exec sleep 600";
    let pending = ask_resumed_by_sh(&server, script, &pid_file).await;
    let (status, won) = server.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 200, "{won}");
    eventually("the command started", || pid_file.exists()).await;
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    eventually("the command was killed and reaped", || !proc.exists()).await;
    server.stop().await;
}

/// A server with auth on and a token for alice.
async fn auth_server(config: Config) -> (TestServer, String) {
    let server = TestServer::start_with(Config {
        auth: true,
        ..config
    })
    .await;
    let alice = server.token("alice").await;
    (server, alice)
}

#[tokio::test]
async fn under_auth_webhooks_reach_no_internal_address_unless_the_operator_allows_it() {
    let receiver = Receiver::start().await;
    let (server, alice) = auth_server(Config::default()).await;
    let user = server.as_token(&alice);
    let (status, task) = user.post("/tasks", &json!({"title": "t"})).await;
    assert_eq!(status, 201);
    let sessions = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    for url in [
        receiver.url(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[::1]:9/".to_owned(),
        "http://10.0.0.1/".to_owned(),
        // Issue 26: IPv6 forms that carry 127.0.0.1 are judged by it.
        "http://[::127.0.0.1]/".to_owned(),
        "http://[::ffff:0:127.0.0.1]/".to_owned(),
        "http://[64:ff9b:1::7f00:1]/".to_owned(),
        "http://[2002:7f00:1::]/".to_owned(),
        // Not a URL as written: the parser would trim or encode these.
        " http://example.com/".to_owned(),
        "http://example.com/\u{3000}x".to_owned(),
    ] {
        let (status, body) = user
            .post(&sessions, &json!({"resume": {"webhook_url": url}}))
            .await;
        assert_eq!(status, 400, "{url}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("resume.webhook_url:"),
            "{body}"
        );
    }
    // A name is checked where it resolves, at dispatch.
    let by_name = format!("http://localhost:{}/resume", receiver.port());
    let (_, session, agent) = user.session(Some(json!({"webhook_url": by_name}))).await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, body) = user.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(receiver.count(), 0, "the webhook reached loopback");
    let (code, view) = user.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (code, &view["active"]),
        (200, &json!(true)),
        "still answerable"
    );
    server.stop().await;

    // The operator allows loopback: both forms work.
    let (server, alice) = auth_server(Config {
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::default()
    })
    .await;
    let user = server.as_token(&alice);
    for url in [receiver.url(), by_name] {
        let before = receiver.count();
        let (_, session, agent) = user.session(Some(json!({"webhook_url": url}))).await;
        let pending = server.ask(&session, &agent, question()).await;
        let (status, body) = user.respond(&pending, &pick("q1_opt1")).await;
        assert_eq!(status, 200, "{url}: {body}");
        assert_eq!(receiver.count(), before + 1, "{url}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_webhook_that_redirects_is_not_followed() {
    let receiver = Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server
        .session(Some(json!({"webhook_url": receiver.redirecting_url()})))
        .await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, body) = server.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 500, "a redirect is not an acceptance: {body}");
    assert_eq!(receiver.count(), 0, "the redirect's target was hit");
    assert_eq!(
        status_of(&server, &pending).await,
        (json!("pending"), json!(true))
    );
    server.stop().await;
}

#[tokio::test]
async fn another_readers_wait_never_takes_the_agents_delivery() {
    let receiver = Receiver::start().await;
    let (server, alice) = auth_server(Config {
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::default()
    })
    .await;
    let bob = server.token("bob").await;
    // A task without a workspace: both users see it (L1c).
    let (_, session, agent) = server
        .as_token(&alice)
        .session(Some(json!({"webhook_url": receiver.url()})))
        .await;
    // The agent asks without attaching and leaves.
    let pending = server.ask(&session, &agent, question()).await;
    // Bob polls: a finished poll would have counted as the agent's for the
    // grace period after it.
    let bob_api = server.as_token(&bob);
    let (status, _) = bob_api
        .get(&format!("/clarification/{pending}/wait?timeout=0"))
        .await;
    assert_eq!(status, 504);
    let (_, view) = bob_api.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["agent_waiting"], false, "Bob is not the agent: {view}");
    // And one blocked while Alice answers: Bob observes the outcome.
    let url = format!("/clarification/{pending}/wait?timeout=30");
    let watching = bob_api.get(&url);
    let answering = async {
        let answered = server
            .as_token(&alice)
            .respond(&pending, &pick("q1_opt2"))
            .await;
        assert_eq!(answered.0, 200, "{}", answered.1);
        answered
    };
    let ((seen, observed), (_, won)) = tokio::join!(watching, answering);
    assert_eq!(seen, 200, "{observed}");
    assert_eq!(observed["response"]["answers"], won["response"]["answers"]);
    assert_eq!(receiver.count(), 1, "the agent is resumed exactly once");
    assert_eq!(receiver.last()["pending_id"], pending.as_str());
    server.stop().await;
}

async fn socket(
    server: &TestServer,
    headers: &[(&'static str, String)],
) -> Result<EventSocket, String> {
    let mut request = server
        .url("/api/v1/ws")
        .replace("http://", "ws://")
        .into_client_request()
        .unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(error) => Err(error.to_string()),
    }
}

async fn next_json(socket: &mut EventSocket) -> Value {
    loop {
        if let Message::Text(text) = socket.next().await.unwrap().unwrap() {
            return serde_json::from_str(&text).unwrap();
        }
    }
}

#[tokio::test]
async fn an_agent_token_receives_its_own_sessions_events_only() {
    let (server, alice) = auth_server(Config::default()).await;
    let user = server.as_token(&alice);
    let (task, mine, my_agent) = user.session(None).await;
    let (status, sibling) = user
        .post(&format!("/tasks/{task}/sessions"), &json!({}))
        .await;
    assert_eq!(status, 201);
    let sibling_id = sibling["id"].as_str().unwrap();
    let sibling_agent = sibling["agent_token"].as_str().unwrap();
    let mut events = socket(&server, &[("authorization", format!("Bearer {my_agent}"))])
        .await
        .unwrap();
    // The sibling's question comes first; none of its events may arrive.
    let theirs = server.ask(sibling_id, sibling_agent, question()).await;
    let own = server.ask(&mine, &my_agent, question()).await;
    loop {
        let event = next_json(&mut events).await;
        let payload = &event["payload"];
        assert_ne!(payload["task_session_id"], sibling_id, "{event}");
        assert_ne!(payload["session_id"], sibling_id, "{event}");
        assert_ne!(
            payload["metadata"]["pending_id"],
            theirs.as_str(),
            "{event}"
        );
        if payload["metadata"]["pending_id"] == own.as_str() {
            break;
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_foreign_host_is_refused_on_every_route() {
    let server = TestServer::start_with(Config {
        allowed_hosts: vec!["clarify.example.com".into()],
        ..Config::default()
    })
    .await;
    let port = server.url("").rsplit(':').next().unwrap().to_owned();
    let client = server.client();
    let rebound = format!("rebind.evil:{port}");
    let create = client
        .post(server.url("/api/v1/tasks"))
        .header("host", &rebound)
        .json(&json!({"title": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(create.status(), 403);
    let body: Value = create.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().starts_with("Host:"),
        "{body}"
    );
    for (method, path) in [
        (reqwest::Method::GET, "/"),
        (reqwest::Method::GET, "/api/v1/tasks"),
        (reqwest::Method::POST, "/mcp"),
        (reqwest::Method::POST, "/mcp/agent"),
        (reqwest::Method::GET, "/api/v1/ws"),
    ] {
        let response = client
            .request(method, server.url(path))
            .header("host", &rebound)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{path}");
    }
    let (_, tasks) = server.get("/tasks").await;
    assert_eq!(tasks["tasks"], json!([]), "nothing was created");
    // Localhost, the address and the operator's name are served.
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        "clarify.example.com".into(),
    ] {
        let response = client
            .get(server.url("/api/v1/tasks"))
            .header("host", host.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{host}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_websocket_from_a_foreign_origin_is_refused() {
    let server = TestServer::start().await;
    let refused = socket(&server, &[("origin", "https://evil.example".into())]).await;
    let error = refused.expect_err("a foreign origin was served");
    assert!(error.contains("403"), "{error}");
    // Our own page, and a tool sending no Origin, are served.
    let own = server.url("");
    let mut ours = socket(&server, &[("origin", own)]).await.unwrap();
    let mut tool = socket(&server, &[]).await.unwrap();
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    for events in [&mut ours, &mut tool] {
        let added = clarify_tests::next_event(events, "session.message.added").await;
        assert_eq!(added["payload"]["metadata"]["pending_id"], pending.as_str());
    }
    server.stop().await;
}

#[tokio::test]
async fn cross_site_state_changes_are_refused_bodyless_ones_included() {
    let server = TestServer::start().await;
    let (task, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let client = server.client();
    let evil = [("origin", "https://evil.example")];
    let cross_site = [("sec-fetch-site", "cross-site")];
    let attempts: [(&str, &[(&str, &str)]); 5] = [
        ("/clarification/{p}/cancel", &evil),
        ("/clarification/{p}/detach", &evil),
        ("/clarification/{p}/cancel", &cross_site),
        ("/sessions/{s}/turns", &evil),
        ("/sessions/{s}/turns", &cross_site),
    ];
    for (path, headers) in attempts {
        let path = path.replace("{p}", &pending).replace("{s}", &session);
        let mut request = client.post(server.url(&format!("/api/v1{path}")));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 403, "{path} {headers:?}");
    }
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["active"], true, "still active, not detached: {view}");
    assert_eq!(view["agent_disconnected"], false, "{view}");

    // A form can send text/plain without asking first; JSON routes refuse it.
    let plain = client
        .post(server.url(&format!("/api/v1/tasks/{task}/sessions")))
        .header("content-type", "text/plain")
        .body(r#"{"resume": {"webhook_url": "http://127.0.0.1:9/"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 415);
    let (_, sessions) = server.get(&format!("/tasks/{task}/sessions")).await;
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        1,
        "{sessions}"
    );
    // The session's body is optional, but one that is sent is JSON: white
    // space alone is not (Schemathesis, seed 8332633005430374262).
    let sessions_url = server.url(&format!("/api/v1/tasks/{task}/sessions"));
    let blank = client
        .post(&sessions_url)
        .header("content-type", "application/json")
        .body("\r")
        .send()
        .await
        .unwrap();
    assert_eq!(blank.status(), 400);
    let none = client.post(&sessions_url).send().await.unwrap();
    assert_eq!(none.status(), 201, "no body at all: no resume target");
    server.stop().await;
}

#[tokio::test]
async fn responses_forbid_sniffing_and_framing_and_the_page_runs_only_our_code() {
    let server = TestServer::start().await;
    let page = server.client().get(server.url("/")).send().await.unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    for directive in [
        "default-src 'none'",
        "script-src 'self' 'wasm-unsafe-eval'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let body = page.text().await.unwrap();
    assert!(
        !body.contains("<script>") && !body.contains("<style>"),
        "inline code: {body}"
    );
    let refused = server
        .client()
        .get(server.url("/api/v1/tasks"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    for path in ["/", "/api/v1/tasks", "/assets/boot.js", "/healthz"] {
        let response = server.client().get(server.url(path)).send().await.unwrap();
        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["x-frame-options"], "DENY", "{path}");
    }
    assert_eq!(refused.headers()["x-content-type-options"], "nosniff");
    server.stop().await;
}

#[tokio::test]
async fn the_login_cookie_is_secure_when_the_browser_came_over_https() {
    let (server, alice) = auth_server(Config::default()).await;
    let login = async |headers: &[(&str, &str)]| {
        let mut request = server
            .client()
            .post(server.url("/api/v1/auth/login"))
            .json(&json!({"token": alice}));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let plain = login(&[]).await;
    assert!(!plain.contains("Secure"), "{plain}");
    let proxied = login(&[("x-forwarded-proto", "https")]).await;
    assert!(proxied.contains("; Secure"), "{proxied}");
    let forwarded = login(&[("forwarded", "for=1.2.3.4;proto=https")]).await;
    assert!(forwarded.contains("; Secure"), "{forwarded}");
    server.stop().await;
}

/// A raw MCP request to `/mcp` as `token`, in session `session` if any.
async fn mcp_post(
    server: &TestServer,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = server
        .client()
        .post(server.url("/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn an_mcp_session_serves_only_the_identity_that_opened_it() {
    let (server, alice) = auth_server(Config::default()).await;
    let bob = server.token("bob").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "security-test", "version": "1"}}});
    let opened = mcp_post(&server, &alice, None, &init).await;
    assert_eq!(opened.status(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(opened);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let done = mcp_post(&server, &alice, Some(&session), &initialized).await;
    assert!(done.status().is_success(), "{}", done.status());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let borrowed = mcp_post(&server, &bob, Some(&session), &list).await;
    assert_eq!(borrowed.status(), 404, "Bob used Alice's session");
    let own = mcp_post(&server, &alice, Some(&session), &list).await;
    assert_eq!(own.status(), 200);
    let text = own.text().await.unwrap();
    assert!(text.contains("list_pending_questions_kandev"), "{text}");
    server.stop().await;
}

#[test]
fn token_expiry_is_bounded_by_the_command_line() {
    let database = std::env::temp_dir().join(format!(
        "clarify-security-{}.db",
        clarify_server::ids::new_id()
    ));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args([
            "token",
            "create",
            "--user",
            "x",
            "--expires-in-days",
            "4000000000",
        ])
        .arg("--database-url")
        .arg(format!("sqlite://{}", database.display()))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--expires-in-days"), "{stderr}");
    assert!(!database.exists(), "nothing was created");
}

/// Issue 45 item 7 P1 (the reviewer's reproduction): with `--public-url
/// http://127.0.0.1:7622`, a page on another port of that address got a
/// WebSocket carrying the user's cookie, because only the host was
/// compared. Scheme, host and port are compared now.
#[tokio::test]
async fn a_page_on_another_port_of_the_public_urls_host_gets_no_websocket() {
    let server = TestServer::start_with(Config {
        public_url: Some("http://127.0.0.1:7622".into()),
        ..Config::default()
    })
    .await;
    for foreign in [
        "http://127.0.0.1:8888",
        "http://127.0.0.1",
        "https://127.0.0.1:7622",
    ] {
        let refused = socket(&server, &[("origin", foreign.into())]).await;
        let error = refused.expect_err(foreign);
        assert!(error.contains("403"), "{foreign}: {error}");
    }
    // The public URL's own pages, and the server's own address, are served.
    let own = server.url("");
    for ours in ["http://127.0.0.1:7622", own.trim_end_matches('/')] {
        socket(&server, &[("origin", ours.into())])
            .await
            .unwrap_or_else(|e| panic!("{ours}: {e}"));
    }
    server.stop().await;
}
