//! Quotas per user, not per credential (issue 26, item 5): agent tokens
//! were free to mint (`POST /tasks/{id}/sessions`) and every cap counted
//! credentials, so 64 agent tokens × 64
//! WebSockets filled the server's 4,096 and locked everyone else out. Now a
//! user's agents count against that user, open sessions per user are
//! bounded (`--max-open-sessions`), and so are a user's long waits.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::{TestServer, closed_with};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// Longer than anything here takes when it works.
const PROMPTLY: Duration = Duration::from_secs(10);

fn one_question() -> Value {
    json!([{"prompt": "Which way?", "options": [{"label": "a"}, {"label": "b"}]}])
}

/// A session on a task of its own, made with `token`: (task, session,
/// agent token).
async fn session_of(server: &TestServer, token: &str) -> (String, String, String) {
    server.as_token(token).session(None).await
}

#[tokio::test]
async fn agents_count_against_the_user_who_created_their_sessions() {
    let server = TestServer::start_with(Config {
        auth: true,
        ws_per_user: Some(2),
        ws_total: Some(4),
        ..Config::default()
    })
    .await;
    let bob = server.token("bob").await;
    let mut agents = Vec::new();
    for _ in 0..4 {
        agents.push(session_of(&server, &bob).await.2);
    }
    // Two of Bob's agents take his share; his other two are refused
    // however fresh their tokens.
    let _held = [
        server.events_as(&agents[0]).await,
        server.events_as(&agents[1]).await,
    ];
    for agent in &agents[2..] {
        let mut refused = server.events_as(agent).await;
        let (code, reason) = tokio::time::timeout(PROMPTLY, closed_with(&mut refused))
            .await
            .expect("a fresh agent token is no fresh quota: refused at once");
        assert_eq!(code, CloseCode::Policy);
        assert!(reason.contains("for this user"), "{reason}");
    }
    // The server's total still has room for Alice.
    let alice = server.token("alice").await;
    let stream = server
        .client()
        .get(server.url("/api/v1/pending/stream"))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200, "Alice's stream is not crowded out");
    server.stop().await;
}

#[tokio::test]
async fn open_sessions_per_user_are_bounded_and_an_ended_one_frees_a_place() {
    let server = TestServer::start_with(Config {
        auth: true,
        max_open_sessions: Some(3),
        ..Config::default()
    })
    .await;
    let bob = server.token("bob").await;
    let mut made = Vec::new();
    for _ in 0..3 {
        made.push(session_of(&server, &bob).await);
    }
    let (task, first, agent) = made[0].clone();
    let path = format!("/tasks/{task}/sessions");
    let refused = server
        .client()
        .post(server.url(&format!("/api/v1{path}")))
        .bearer_auth(&bob)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("at most 3 per user (--max-open-sessions)"),
        "{body}"
    );
    // Nor does his agent's token mint any (agents only ask and wait).
    let (status, body) = server.as_token(&agent).post(&path, &json!({})).await;
    assert_eq!(status, 403, "{body}");
    // Alice has her own share.
    let alice = server.token("alice").await;
    session_of(&server, &alice).await;
    // An ended session frees its place.
    let (status, body) = server
        .as_token(&bob)
        .patch(
            &format!("/sessions/{first}"),
            &json!({"state": "COMPLETED"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.as_token(&bob).post(&path, &json!({})).await;
    assert_eq!(status, 201, "{body}");
    server.stop().await;
}

#[tokio::test]
async fn concurrent_creations_never_pass_the_bound() {
    let server = TestServer::start_with(Config {
        auth: true,
        max_open_sessions: Some(4),
        ..Config::default()
    })
    .await;
    for round in 0..5 {
        let user = server.token(&format!("racer {round}")).await;
        let (task, _, _) = session_of(&server, &user).await;
        let path = format!("/tasks/{task}/sessions");
        let attempts = (0..12).map(|_| {
            let api = server.as_token(&user);
            let path = path.clone();
            async move { api.post(&path, &json!({})).await.0 }
        });
        let statuses = futures_util::future::join_all(attempts).await;
        let created = statuses.iter().filter(|s| **s == 201).count();
        assert_eq!(created, 3, "round {round}: {statuses:?}");
        assert!(
            statuses.iter().all(|s| matches!(s, 201 | 429)),
            "{statuses:?}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_user_s_long_waits_are_bounded_and_others_still_wait() {
    // Two open sessions each, so four waits each.
    let server = TestServer::start_with(Config {
        auth: true,
        max_open_sessions: Some(2),
        ..Config::default()
    })
    .await;
    let bob = server.token("bob").await;
    let mut pending = Vec::new();
    for _ in 0..2 {
        let (_, session, agent) = session_of(&server, &bob).await;
        let id = server.as_token(&agent).ask(&session, one_question()).await;
        pending.push((id, agent));
    }
    let wait = |pending: &str, token: &str, seconds: u64| {
        server
            .client()
            .get(server.url(&format!(
                "/api/v1/clarification/{pending}/wait?timeout={seconds}"
            )))
            .bearer_auth(token)
            .send()
    };
    // Bob's agents hold his four waits (one refused while the probe below
    // held a place asks again).
    let mut held = Vec::new();
    for (id, agent) in pending.iter().chain(pending.iter()) {
        held.push(async move { while wait(id, agent, 60).await.unwrap().status() == 429 {} });
    }
    let held = futures_util::future::join_all(held);
    let probe = async {
        // A probe that lands before the held waits do takes a place and
        // times out after a second; once all four hold theirs, it is
        // refused at once.
        loop {
            let response = wait(&pending[0].0, &bob, 1).await.unwrap();
            match response.status().as_u16() {
                429 => return response.json::<Value>().await.unwrap(),
                504 => {}
                other => panic!("{other}"),
            }
        }
    };
    let body = tokio::select! {
        body = tokio::time::timeout(PROMPTLY, probe) => body.expect("the fifth wait is refused"),
        _ = held => panic!("the held waits ended"),
    };
    assert!(
        body["error"].as_str().unwrap().contains("too many waits"),
        "{body}"
    );
    // Alice waits as ever.
    let alice = server.token("alice").await;
    let (_, session, agent) = session_of(&server, &alice).await;
    let id = server.as_token(&agent).ask(&session, one_question()).await;
    assert_eq!(wait(&id, &agent, 1).await.unwrap().status(), 504);
    server.stop().await;
}

/// Logins are per user too: each one stored a row for 30 days without
/// bound. Now a user keeps the newest 32; a login beyond logs the oldest
/// browser out, and expired ones are forgotten.
#[tokio::test]
async fn a_user_s_browser_logins_are_bounded_and_the_oldest_is_logged_out() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let mut cookies = Vec::new();
    for _ in 0..33 {
        let cookie = server.login(&alice).await;
        cookies.push(cookie.split(';').next().unwrap().to_owned());
    }
    let tasks_with = |cookie: &str| {
        server
            .client()
            .get(server.url("/api/v1/tasks"))
            .header("cookie", cookie)
            .send()
    };
    assert_eq!(tasks_with(&cookies[0]).await.unwrap().status(), 401);
    assert_eq!(tasks_with(&cookies[1]).await.unwrap().status(), 200);
    assert_eq!(tasks_with(&cookies[32]).await.unwrap().status(), 200);
    let (kept,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM browser_sessions")
        .fetch_one(server.db().pool())
        .await
        .unwrap();
    assert_eq!(kept, 32);
    server.stop().await;
}

/// A raw ask of `prompt` (with `questions` questions) on `session` as
/// `agent`: its status, `Retry-After` and body.
async fn ask_raw(
    server: &TestServer,
    agent: &str,
    session: &str,
    prompt: &str,
    questions: usize,
) -> (u16, Option<String>, Value) {
    let one = json!({"prompt": prompt, "options": [{"label": "a"}, {"label": "b"}]});
    let body = json!({"session_id": session, "questions": vec![one; questions]});
    let response = server
        .client()
        .post(server.url("/api/v1/clarification/request"))
        .bearer_auth(agent)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, retry, response.json().await.unwrap())
}

fn limited(max_open_questions: u32, burst: u32, per_minute: u32) -> Config {
    Config {
        auth: true,
        ask_limits: clarify_server::lifecycle::AskLimits {
            max_open_questions,
            burst,
            per_minute,
        },
        ..Config::default()
    }
}

/// Issue 45 item 7-P4: one agent token stored 60 asks in 5 s with no 429.
/// With the defaults, a burst of 30 passes (a normal user is not
/// bothered), then the asks of that user, whichever of their agents asks,
/// are paced: 429 with `Retry-After`, naming the flags; another user asks
/// as ever, and an identical ask again (which makes nothing) is answered.
#[tokio::test]
async fn a_user_s_asks_are_paced_after_a_burst_and_others_still_ask() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let mut agents = Vec::new();
    for _ in 0..3 {
        let (_, session, agent) = session_of(&server, &alice).await;
        agents.push((session, agent));
    }
    let started = std::time::Instant::now();
    let mut accepted = 0;
    let refused = loop {
        let (session, agent) = &agents[accepted % agents.len()];
        let (status, retry, body) =
            ask_raw(&server, agent, session, &format!("Q{accepted}?"), 1).await;
        match status {
            200 | 201 => accepted += 1,
            429 => break (retry, body),
            other => panic!("{other}: {body}"),
        }
        assert!(accepted <= 60, "60 asks and never paced");
    };
    let refill = started.elapsed().as_secs_f64() * 2.0;
    assert!(accepted >= 30, "the burst passes: {accepted}");
    assert!(
        f64::from(u32::try_from(accepted).unwrap()) <= 30.0 + refill + 1.0,
        "{accepted}"
    );
    let (retry, body) = refused;
    assert_eq!(retry.as_deref(), Some("1"), "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("--ask-burst") && error.contains("retry in 1 s"),
        "{error}"
    );
    // The same question again makes nothing, and is answered.
    let (session, agent) = &agents[0];
    let (status, _, again) = ask_raw(&server, agent, session, "Q0?", 1).await;
    assert_eq!(status, 200, "{again}");
    let bob = server.token("bob").await;
    let (_, session, agent) = session_of(&server, &bob).await;
    let (status, _, body) = ask_raw(&server, &agent, &session, "Bob's?", 1).await;
    assert_eq!(status, 201, "{body}");
    server.stop().await;
}

/// Issue 45 item 7-P4: the questions a user keeps open are bounded
/// (`--max-open-questions`, counted from the database across all their
/// sessions); an answer frees room, and other users are not affected.
#[tokio::test]
async fn a_user_s_open_questions_are_bounded_and_an_answer_frees_room() {
    let server = TestServer::start_with(limited(5, 100, 6000)).await;
    let alice = server.token("alice").await;
    let (_, one, agent_one) = session_of(&server, &alice).await;
    let (_, two, agent_two) = session_of(&server, &alice).await;
    let (status, _, first) = ask_raw(&server, &agent_one, &one, "First?", 2).await;
    assert_eq!(status, 201, "{first}");
    let (status, _, body) = ask_raw(&server, &agent_two, &two, "Second?", 2).await;
    assert_eq!(status, 201, "{body}");
    let (status, retry, body) = ask_raw(&server, &agent_two, &two, "Third?", 2).await;
    assert_eq!((status, retry.as_deref()), (429, Some("30")), "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("--max-open-questions"),
        "{body}"
    );
    let bob = server.token("bob").await;
    let (_, session, agent) = session_of(&server, &bob).await;
    let (status, _, body) = ask_raw(&server, &agent, &session, "Bob's?", 4).await;
    assert_eq!(status, 201, "{body}");
    let (status, _) = server
        .as_token(&alice)
        .respond(
            first["pending_id"].as_str().unwrap(),
            &json!({"rejected": true}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _, body) = ask_raw(&server, &agent_two, &two, "Third?", 2).await;
    assert_eq!(status, 201, "room again: {body}");
    server.stop().await;
}

/// Issue 45 item 7-P4 over MCP: `/mcp/agent`'s ask gets the same bound as
/// a tool error saying when to retry, as its other quota refusals are.
#[tokio::test]
async fn an_mcp_ask_beyond_the_pace_is_a_tool_error_saying_when_to_retry() {
    let server = TestServer::start_with(limited(400, 1, 1)).await;
    let alice = server.token("alice").await;
    let (_, session, agent) = session_of(&server, &alice).await;
    let (status, _, body) = ask_raw(&server, &agent, &session, "Over REST?", 1).await;
    assert_eq!(status, 201, "{body}");
    let client = clarify_tests::mcp::connect(&server, "/mcp/agent", Some(&agent)).await;
    let args = json!({"questions": [{"prompt": "Over MCP?", "options": [{"label": "a"}, {"label": "b"}]}]});
    let result = tokio::time::timeout(
        PROMPTLY,
        clarify_tests::mcp::call(&client, "ask_user_question_kandev", &args),
    )
    .await
    .expect("refused at once, not blocked");
    let text = clarify_tests::mcp::err(&result);
    assert!(
        text.contains("asking too fast") && text.contains("retry in"),
        "{text}"
    );
    let _ = client.cancel().await;
    server.stop().await;
}
