//! The operator's metrics (issue 49 item 1): `GET /metrics` off by
//! default, on with `--metrics` (an admin's credential under --auth), or
//! on a port of its own with `--metrics-listen`; the figures follow what
//! happened. (e2e/contract/metrics_check.py reads the exposition with
//! Prometheus's own Python parser in the test command.)

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use clarify_server::Config;
use clarify_tests::TestServer;
use clarify_tests::metrics::{sample, scrape};
use serde_json::json;

fn question() -> serde_json::Value {
    json!([{"prompt": "Ship it?", "options": [{"label": "Yes"}, {"label": "No"}]}])
}

/// Issue 49 item 1: off unless asked for; then asked, answered, declined
/// and cancelled bundles are counted by outcome, channel and kind, time
/// to answer is a histogram, what waits is read at the scrape, and each
/// request is counted by its route (never its path).
#[tokio::test]
async fn metrics_count_what_happened_and_are_off_unless_asked_for() {
    let plain = TestServer::start().await;
    let off = plain
        .client()
        .get(plain.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(off.status(), 404);

    let server = TestServer::start_with(Config {
        metrics: true,
        ..Config::default()
    })
    .await;
    // An agent that moved on, resumed through its webhook when answered.
    let receiver = clarify_tests::Receiver::start().await;
    let (_, resumed_session, resumed_agent) = server.session_resumed_by(&receiver).await;
    let resumed = server
        .ask(&resumed_session, &resumed_agent, question())
        .await;
    let (_, session, agent) = server.session(None).await;
    let answered = server.ask(&session, &agent, question()).await;
    let declined = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Rename?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let cancelled = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Delete?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let waiting = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Wait?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&answered, &pick).await.0, 200);
    assert_eq!(server.respond(&resumed, &pick).await.0, 200);
    assert_eq!(server.respond(&answered, &pick).await.1["claimed"], false);
    let decline = json!({"rejected": true, "reject_reason": "not now"});
    assert_eq!(server.respond(&declined, &decline).await.0, 200);
    let (status, _) = server
        .as_token(&agent)
        .post(&format!("/clarification/{cancelled}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200);
    let link = server
        .client()
        .get(server.url("/answer/clk_link_not-a-token"))
        .send()
        .await
        .unwrap();
    assert_eq!(link.status(), 404);
    // An agent blocked on its question counts while it waits.
    let wait = server
        .client()
        .get(server.url(&format!("/api/v1/clarification/{waiting}/wait?timeout=30")))
        .bearer_auth(&agent)
        .send();
    let blocked = tokio::spawn(wait);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = server
            .client()
            .get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if sample(&text, "clarify_agents_waiting") == Some(1.0) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no agent counted as waiting:\n{text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    blocked.abort();

    let scraped = server
        .client()
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(
        scraped.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = scraped.text().await.unwrap();
    let expect = [
        ("clarify_questions_asked_total{kind=\"question\"}", 5.0),
        (
            "clarify_questions_settled_total{outcome=\"answered\",channel=\"rest\",kind=\"question\"}",
            2.0,
        ),
        (
            "clarify_questions_settled_total{outcome=\"declined\",channel=\"rest\",kind=\"question\"}",
            1.0,
        ),
        (
            "clarify_questions_settled_total{outcome=\"cancelled\",channel=\"agent\",kind=\"question\"}",
            1.0,
        ),
        (
            "clarify_time_to_answer_seconds_count{outcome=\"answered\"}",
            2.0,
        ),
        ("clarify_claim_seconds_count", 3.0),
        (
            "clarify_resume_dispatches_total{target=\"webhook\",outcome=\"accepted\"}",
            1.0,
        ),
        ("clarify_questions_waiting", 1.0),
        (
            "clarify_http_requests_total{route=\"/api/v1/clarification/{id}/respond\",status=\"200\"}",
            4.0,
        ),
        (
            "clarify_http_requests_total{route=\"/answer/{token}\",status=\"404\"}",
            1.0,
        ),
    ];
    for (series, value) in expect {
        assert_eq!(sample(&text, series), Some(value), "{series}\n{text}");
    }
    assert!(
        !text.contains("clk_link_not-a-token"),
        "a path's capability leaked:\n{text}"
    );
    assert!(
        text.contains("# TYPE clarify_time_to_answer_seconds histogram"),
        "{text}"
    );
}

/// Issue 49 item 1: under --auth, /metrics takes an admin's credential: none
/// is 401, a user's or an agent's 403.
#[tokio::test]
async fn under_auth_only_an_admin_reads_the_metrics() {
    let server = TestServer::start_with(Config {
        auth: true,
        metrics: true,
        ..Config::default()
    })
    .await;
    let get = |token: Option<String>| {
        let mut request = server.client().get(server.url("/metrics"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(get(None).await, 401);
    let alice = server.token("alice").await;
    assert_eq!(get(Some(alice)).await, 403);
    let admin = server.token("operator").await;
    let made = Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args([
            "token",
            "create",
            "--user",
            "operator",
            "--admin",
            "--database-url",
            server.database().url(),
        ])
        .output()
        .unwrap();
    assert!(made.status.success());
    assert_eq!(get(Some(admin)).await, 200);
}

/// Issue 49 item 1: `--metrics-listen` serves the figures on a port of its
/// own, without a credential even under --auth, said under the listening
/// line; the API's port has none.
#[tokio::test]
async fn metrics_listen_serves_them_on_a_port_of_its_own() {
    let dir = clarify_tests::process::fresh_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--auth",
            "--metrics-listen",
            "127.0.0.1:0",
            "--database-url",
        ])
        .arg(clarify_tests::process::database_url(&dir))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (mut api, mut metrics) = (String::new(), String::new());
    let mut line = String::new();
    while metrics.is_empty() && out.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.strip_prefix("listening on ") {
            api = rest.split_whitespace().next().unwrap().to_owned();
        } else if let Some(rest) = line.trim().strip_prefix("metrics: ") {
            metrics = rest.to_owned();
        }
        line.clear();
    }
    let http = reqwest::Client::new();
    let scraped = http.get(&metrics).send().await.unwrap();
    assert_eq!(scraped.status(), 200, "{metrics}");
    assert!(
        scraped
            .text()
            .await
            .unwrap()
            .contains("clarify_questions_waiting 0")
    );
    // Not served there (under --auth an unknown path asks for a credential).
    let there = http
        .get(format!("{api}/metrics"))
        .send()
        .await
        .unwrap()
        .status();
    assert!(matches!(there.as_u16(), 401 | 404), "{there}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}

/// Issue 49 item 1: an agent blocked on `/wait` and woken by the answer
/// is one wake in `clarify_wake_seconds`; the connections held and the MCP
/// sessions open are read where they live at the scrape, an ended session
/// no longer counted.
#[tokio::test]
async fn wakes_connections_and_mcp_sessions_are_measured() {
    let server = TestServer::start_with(Config {
        metrics: true,
        ..Config::default()
    })
    .await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let wait = server
        .client()
        .get(server.url(&format!("/api/v1/clarification/{pending}/wait?timeout=30")))
        .bearer_auth(&agent)
        .send();
    let blocked = tokio::spawn(wait);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sample(&scrape(&server).await, "clarify_agents_waiting") != Some(1.0) {
        assert!(std::time::Instant::now() < deadline, "never blocked");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let held = sample(&scrape(&server).await, "clarify_connections_held").unwrap();
    assert!(held >= 2.0, "the blocked wait and the scrape: {held}");
    // issue 50: the runtime's tasks, one for each connection at least.
    let tasks = sample(&scrape(&server).await, "clarify_tasks_alive").unwrap();
    assert!(tasks >= held, "tasks {tasks} for {held} connections");
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&pending, &pick).await.0, 200);
    assert_eq!(blocked.await.unwrap().unwrap().status(), 200);
    let text = scrape(&server).await;
    assert_eq!(
        sample(&text, "clarify_wake_seconds_count"),
        Some(1.0),
        "{text}"
    );
    let woke = sample(&text, "clarify_wake_seconds_sum").unwrap();
    assert!((0.0..5.0).contains(&woke), "{woke}");

    let gauge = "clarify_mcp_sessions{surface=\"mcp\"}";
    let client = clarify_tests::mcp::connect(&server, "/mcp", None).await;
    assert_eq!(sample(&scrape(&server).await, gauge), Some(1.0));
    client.cancel().await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sample(&scrape(&server).await, gauge) != Some(0.0) {
        assert!(
            std::time::Instant::now() < deadline,
            "an ended session still counted"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
