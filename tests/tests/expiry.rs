//! Questions that expire on purpose (issue 18): `expires_in_seconds` on an
//! ask, `--question-ttl` as the default; an expired bundle is listed
//! nowhere and cannot be answered, and its waiting agent is told so, typed;
//! an answer racing the expiry has exactly one outcome, on one replica or
//! two (SQLite here, PostgreSQL when the suite runs there).

use std::time::Duration;

use clarify_tests::TestServer;
use clarify_tests::mcp::{call, connect, ok};
use serde_json::{Value, json};

fn questions() -> Value {
    json!([{"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

/// Asks with `expires_in_seconds` (when given) as the session's agent.
async fn ask(server: &TestServer, expires: Option<u64>) -> (String, String) {
    let (pending, _, agent) = server.ask_expiring(questions(), expires).await;
    (pending, agent)
}

fn answer() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
}

#[tokio::test]
async fn an_expired_question_is_closed_everywhere_and_its_agent_is_told() {
    let server = TestServer::start().await;
    let (pending, agent) = ask(&server, Some(1)).await;
    let (status, body) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=20"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "expired", "{body}");
    assert_eq!(body["claimed"], false, "{body}");
    assert_eq!(body["response"]["answers"], json!([]), "{body}");
    assert_eq!(body["response"]["pending_id"], pending.as_str());

    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (&view["status"], &view["active"]),
        (&json!("expired"), &json!(false))
    );
    let (_, listed) = server.get("/pending").await;
    assert_eq!(listed["count"], 0, "listed nowhere: {listed}");
    let (status, _) = server.respond(&pending, &answer()).await;
    assert_eq!(status, 409);
    let (plain, _) = ask(&server, None).await;
    let (_, view) = server.get(&format!("/clarification/{plain}")).await;
    assert_eq!(
        view["expires_at"], "",
        "always present, \"\" for never: {view}"
    );
    server.stop().await;
}

#[tokio::test]
async fn expires_in_seconds_is_checked_and_named() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    // Out of range: 400; not a whole number at all: 422, as for any field.
    for (bad, expected) in [
        (json!(0), 400),
        (json!(1_000_000_000_u64), 400),
        (json!("soon"), 422),
        (json!(-5), 422),
    ] {
        let (status, body) = server
            .as_token(&agent)
            .post(
                "/clarification/request",
                &json!({"session_id": session, "questions": questions(), "expires_in_seconds": bad}),
            )
            .await;
        assert_eq!(status, expected, "{bad}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("expires_in_seconds"),
            "{bad}: {body}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn the_servers_question_ttl_is_the_default_and_an_ask_may_say_otherwise() {
    let server = TestServer::start_with(clarify_server::Config {
        question_ttl: Some(Duration::from_secs(1)),
        ..clarify_server::Config::default()
    })
    .await;
    let (defaulted, agent) = ask(&server, None).await;
    let (longer, _) = ask(&server, Some(3600)).await;
    let (status, body) = server
        .as_token(&agent)
        .get(&format!("/clarification/{defaulted}/wait?timeout=20"))
        .await;
    assert_eq!(
        (status, &body["status"]),
        (200, &json!("expired")),
        "{body}"
    );
    let (_, view) = server.get(&format!("/clarification/{longer}")).await;
    assert_eq!(view["active"], true, "its own hour still runs: {view}");
    let at = view["expires_at"].as_str().unwrap();
    assert!(at.ends_with('Z') && at.len() >= 20, "RFC 3339: {view}");
    let (_, listed) = server.get("/pending").await;
    assert_eq!(
        listed["bundles"][0]["expires_at"], at,
        "listed with it: {listed}"
    );
    server.stop().await;
}

#[tokio::test]
async fn over_mcp_the_agent_is_told_its_question_expired() {
    let server = TestServer::start().await;
    let (_, _, agent) = server.session(None).await;
    let client = connect(&server, "/mcp/agent", Some(&agent)).await;
    let result = ok(&call(
        &client,
        "ask_user_question_kandev",
        &json!({"questions": [{"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}],
                "expires_in_seconds": 1}),
    )
    .await);
    assert_eq!(result["expired"], true, "{result}");
    assert_eq!(result["rejected"], false, "{result}");
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .contains("Decide yourself, or ask again"),
        "{result}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_answer_racing_the_expiry_has_exactly_one_outcome_across_two_replicas() {
    let first = TestServer::start().await;
    let second = first.replica().await;
    let (mut answered, mut expired) = (0, 0);
    for round in 0..12_u64 {
        let (pending, _) = ask(&first, Some(1)).await;
        // Answer around the moment the sweeps (one per replica, each once a
        // second) find it due.
        tokio::time::sleep(Duration::from_millis(900 + (round % 6) * 240)).await;
        let through = if round % 2 == 0 { &first } else { &second };
        let (status, body) = through.respond(&pending, &answer()).await;
        // Settle: whatever happened has happened within two sweeps.
        let (_, agent_view) = first
            .get(&format!("/clarification/{pending}/wait?timeout=5"))
            .await;
        let (_, view) = second.get(&format!("/clarification/{pending}")).await;
        match status {
            200 => {
                assert_eq!(body["claimed"], true, "{body}");
                assert_eq!(view["status"], "answered", "round {round}: {view}");
                answered += 1;
            }
            409 => {
                assert_eq!(view["status"], "expired", "round {round}: {view}");
                expired += 1;
            }
            other => panic!("round {round}: {other} {body}"),
        }
        assert_eq!(view["active"], false, "round {round}: {view} {agent_view}");
    }
    println!("{answered} answered, {expired} expired");
    second.stop().await;
    first.stop().await;
}

#[tokio::test]
async fn clarify_ask_expires_in_exits_5_with_status_expired() {
    let server = TestServer::start().await;
    let (_, _, agent) = server.session(None).await;
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args(["ask", "--server", &server.url(""), "--token", &agent])
        .args(["-q", "Ship?|yes|no", "--expires-in", "1s"])
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(5), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["status"], "expired", "{printed}");
    assert_eq!(printed["answers"], json!([]), "{printed}");
    server.stop().await;
}

#[tokio::test]
async fn a_detached_agent_is_resumed_with_the_news_that_nobody_answered() {
    let server = TestServer::start().await;
    let receiver = clarify_tests::Receiver::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let (status, asked) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": questions(), "expires_in_seconds": 1}),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    let pending = asked["pending_id"].as_str().unwrap().to_owned();
    let (status, _) = server
        .as_token(&agent)
        .post(&format!("/clarification/{pending}/detach"), &json!({}))
        .await;
    assert!(status < 300, "detached");
    // The resume is the receiver's to see: poll it, bounded.
    tokio::time::timeout(Duration::from_secs(10), async {
        while receiver.count() == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("resumed within 10 s");
    let resume = receiver.last();
    assert_eq!(resume["pending_id"], pending.as_str(), "{resume}");
    let prompt = resume["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("You previously asked the user: \"Ship?\""),
        "{prompt}"
    );
    assert!(
        prompt.ends_with("Decide yourself, or ask again."),
        "{prompt}"
    );
    assert_eq!(resume["response"]["answers"], json!([]), "{resume}");
    assert_eq!(receiver.count(), 1, "once");
    server.stop().await;
}

#[tokio::test]
async fn with_a_default_for_every_question_the_defaults_answer_as_the_expiry_channel() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let both = json!([
        {"prompt": "Ship?", "default_option_id": "q1_opt2",
         "options": [{"label": "yes"}, {"label": "no"}]},
        {"prompt": "Where?", "default_option_id": "eu",
         "options": [{"id": "us", "label": "US"}, {"id": "eu", "label": "EU"}]}
    ]);
    let (status, asked) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": both, "expires_in_seconds": 1}),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    let pending = asked["pending_id"].as_str().unwrap().to_owned();
    let (_, listed) = server.get("/pending").await;
    assert_eq!(
        listed["bundles"][0]["questions"][1]["default_option_id"], "eu",
        "answerers see the default: {listed}"
    );

    let (status, body) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=20"))
        .await;
    assert_eq!(
        (status, &body["status"]),
        (200, &json!("answered")),
        "{body}"
    );
    assert_eq!(
        body["response"]["answers"],
        json!([
            {"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": ""},
            {"question_id": "q2", "selected_options": ["eu"], "custom_text": ""}
        ])
    );
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        view["answered_by"],
        json!({"user": "", "channel": "expiry", "client": ""}),
        "a default is told apart from a person's choice: {view}"
    );
    // The task list says so too (issue 46 item 7: it said "answered").
    let task = view["task_id"].as_str().unwrap().to_owned();
    let (_, tasks) = server.get("/tasks").await;
    let listed = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == task.as_str())
        .unwrap();
    assert_eq!(listed["last_outcome"], "defaulted", "{listed}");
    server.stop().await;
}

#[tokio::test]
async fn a_default_on_only_some_questions_expires_unanswered_and_a_wrong_one_is_named() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let some = json!([
        {"prompt": "Ship?", "default_option_id": "q1_opt1",
         "options": [{"label": "yes"}, {"label": "no"}]},
        {"prompt": "Where?", "options": [{"label": "US"}, {"label": "EU"}]}
    ]);
    let (status, asked) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": some, "expires_in_seconds": 1}),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    let pending = asked["pending_id"].as_str().unwrap();
    let (_, body) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=20"))
        .await;
    assert_eq!(body["status"], "expired", "{body}");

    let wrong = json!([{"prompt": "Ship?", "default_option_id": "maybe",
                        "options": [{"label": "yes"}, {"label": "no"}]}]);
    let (status, body) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": wrong}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("questions[0].default_option_id"),
        "{body}"
    );
    server.stop().await;
}
