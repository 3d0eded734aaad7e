//! A question assigned to a person (issue 29 item 6): `assignee` on an ask
//! over REST, `ask_user_question_kandev` and `clarify ask --assignee`,
//! listed and shown; reassigned by anyone who may see it; named in the
//! notices; never a lock (anyone may still answer). Runs on SQLite and,
//! in the test command's second pass, on PostgreSQL.

use std::process::Stdio;

use clarify_tests::mcp::{call, connect, ok};
use clarify_tests::{NoticeSink, TestServer, next_event};
use serde_json::{Value, json};

fn questions() -> Value {
    json!([{"prompt": "Which region?", "options": [{"label": "eu"}, {"label": "us"}]}])
}

async fn listed_assignee(server: &TestServer, pending: &str) -> Value {
    let (_, page) = server.get("/pending").await;
    page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["pending_id"] == pending)
        .map(|b| b["assignee"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn an_ask_names_its_assignee_over_rest_trimmed_and_a_bad_name_is_refused() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let agent = server.as_token(&agent);
    let (status, body) = agent
        .post(
            "/clarification/request",
            &json!({"session_id": session, "assignee": "  bob ", "questions": questions()}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let pending = body["pending_id"].as_str().unwrap().to_owned();
    assert_eq!(listed_assignee(&server, &pending).await, "bob");
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["assignee"], "bob");

    let (_, other, other_agent) = server.session(None).await;
    for bad in ["x".repeat(65), "bo\u{7}b".to_owned()] {
        let (status, body) = server
            .as_token(&other_agent)
            .post(
                "/clarification/request",
                &json!({"session_id": other, "assignee": bad, "questions": questions()}),
            )
            .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"].as_str().unwrap().starts_with("assignee:"),
            "{body}"
        );
    }
    let (_, page) = server.get("/pending").await;
    assert_eq!(page["count"], 1, "nothing asked by a refused ask: {page}");
    // No assignee: "", always present (L4a).
    let plain = server.as_token(&other_agent).ask(&other, questions()).await;
    assert_eq!(listed_assignee(&server, &plain).await, "");
    server.stop().await;
}

#[tokio::test]
async fn an_mcp_ask_names_its_assignee_and_anyone_may_still_answer() {
    let server = TestServer::start().await;
    let (_, _, agent_token) = server.session(None).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let mut socket = server.events().await;
    let asking = tokio::spawn(async move {
        let result = call(
            &agent,
            "ask_user_question_kandev",
            &json!({"assignee": "carol", "questions": questions()}),
        )
        .await;
        ok(&result)
    });
    let added = next_event(&mut socket, "session.message.added").await;
    let pending = added["payload"]["metadata"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let external = connect(&server, "/mcp", None).await;
    let page = ok(&call(&external, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(page["bundles"][0]["assignee"], "carol");
    // Assigned is not locked: someone else answers, and the agent has it.
    let answered = server
        .respond(
            &pending,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
        )
        .await;
    assert_eq!(answered.0, 200, "{}", answered.1);
    let result = asking.await.unwrap();
    assert!(result.to_string().contains("q1_opt2"), "{result}");
    server.stop().await;
}

#[tokio::test]
async fn clarify_ask_takes_assignee() {
    let server = TestServer::start().await;
    let (_, _, agent) = server.session(None).await;
    let mut socket = server.events().await;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .env_remove("RUST_LOG")
        .args(["ask", "--server", &server.url(""), "--token", &agent])
        .args(["--question", "Which region?|eu|us", "--assignee", "dave"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let added = next_event(&mut socket, "session.message.added").await;
    let pending = added["payload"]["metadata"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(listed_assignee(&server, &pending).await, "dave");
    let _ = child.start_kill();
    let _ = child.wait().await;
    server.stop().await;
}

#[tokio::test]
async fn anyone_who_may_see_it_reassigns_it_and_others_cannot() {
    let server = TestServer::start_with_auth().await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let owner = server.as_token(&alice);
    let (_, workspace) = owner.post("/workspaces", &json!({"name": "alice's"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let (_, session, agent) = owner.session_in(&workspace, None).await;
    let pending = server.as_token(&agent).ask(&session, questions()).await;
    let path = format!("/clarification/{pending}/assign");
    let mut socket = server.events_as(&alice).await;

    let (status, view) = owner.post(&path, &json!({"assignee": " erin "})).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["assignee"], "erin");
    assert_eq!(view["active"], true);
    // The pages that show it hear of it.
    let event = next_event(&mut socket, "session.message.updated").await;
    assert_eq!(event["payload"]["metadata"]["pending_id"], pending.as_str());
    assert_eq!(owner.bundle(&pending).await.bundle.assignee, "erin");

    for (body, code, said) in [
        (json!({"assignee": "x".repeat(65)}), 400, "assignee:"),
        (json!({"assignee": "erin", "extra": true}), 422, "extra"),
        (json!({}), 422, "assignee"),
    ] {
        let (status, answer) = owner.post(&path, &body).await;
        assert_eq!(status, code, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(said), "{answer}");
    }
    // Bob cannot see it, so cannot reassign it.
    assert_eq!(
        server
            .as_token(&bob)
            .post(&path, &json!({"assignee": "bob"}))
            .await
            .0,
        404
    );
    assert_eq!(owner.bundle(&pending).await.bundle.assignee, "erin");
    // Empty: nobody in particular.
    let (_, view) = owner.post(&path, &json!({"assignee": ""})).await;
    assert_eq!(view["assignee"], "");
    // Answered: no longer reassigned.
    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(owner.respond(&pending, &answer).await.0, 200);
    assert_eq!(owner.post(&path, &json!({"assignee": "erin"})).await.0, 409);
    server.stop().await;
}

#[tokio::test]
async fn the_notice_names_the_assignee() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(clarify_server::Config {
        notify_webhooks: vec![sink.url()],
        ..clarify_server::Config::default()
    })
    .await;
    let (_, session, agent) = server.session(None).await;
    let (status, body) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "assignee": "bob", "questions": questions()}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let pending = body["pending_id"].as_str().unwrap();
    let notice = sink.accepted(&format!("{pending}:waiting")).await;
    assert_eq!(notice["assignee"], "bob");
    assert!(
        notice["text"].as_str().unwrap().contains("(for bob):"),
        "{notice}"
    );
    server.stop().await;
}
