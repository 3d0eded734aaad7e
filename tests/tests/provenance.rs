//! Provenance (issue 18): every resolution records who answered, through
//! which channel and, over MCP, which client, in the claim itself; every
//! later attempt is logged; the R12 response stays as the spec has it.

use clarify_tests::mcp::{CLIENT_NAME, call, connect, ok};

use clarify_tests::{TestServer, next_event, race_answers};
use serde_json::{Value, json};

fn question() -> Value {
    json!([{"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

fn answer() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
}

async fn respond_with(server: &TestServer, pending: &str, header: Option<(&str, &str)>) -> Value {
    let mut request = server
        .client()
        .post(server.url(&format!("/api/v1/clarification/{pending}/respond")))
        .json(&answer());
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test]
async fn each_channel_is_recorded_with_the_claim_and_shown_on_the_bundle() {
    let server = TestServer::start().await;
    for (header, channel) in [
        (None, "rest"),
        (Some(("sec-fetch-mode", "cors")), "browser"),
        (Some(("x-clarify-client", "cli")), "cli"),
    ] {
        let (_, session, agent) = server.session(None).await;
        let pending = server.ask(&session, &agent, question()).await;
        let (_, before) = server.get(&format!("/clarification/{pending}")).await;
        assert_eq!(
            before["answered_by"],
            Value::Null,
            "always present: {before}"
        );

        let body = respond_with(&server, &pending, header).await;
        assert!(
            body["response"].get("answered_by").is_none(),
            "R12 stays the spec's: {body}"
        );
        let (_, view) = server.get(&format!("/clarification/{pending}")).await;
        assert_eq!(
            view["answered_by"],
            json!({"user": "anonymous", "channel": channel, "client": ""}),
            "{view}"
        );
        // The transcript's messages carry it in their metadata.
        let (_, messages) = server.get(&format!("/sessions/{session}/messages")).await;
        assert_eq!(
            messages["messages"][0]["metadata"]["answered_by"]["channel"], channel,
            "{messages}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn over_mcp_the_client_is_named_and_the_event_carries_it() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let mut events = server.events().await;
    let client = connect(&server, "/mcp", None).await;
    let result = ok(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
    )
    .await);
    assert_eq!(result["claimed"], true, "{result}");

    let expected = json!({"user": "anonymous", "channel": "mcp", "client": CLIENT_NAME});
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["answered_by"], expected, "{view}");
    let answered = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            let event = next_event(&mut events, "session.message.updated").await;
            let metadata = &event["payload"]["metadata"];
            if metadata["pending_id"] == pending.as_str() && metadata["status"] == "answered" {
                break event;
            }
        }
    })
    .await
    .expect("the answer's event");
    assert_eq!(
        answered["payload"]["metadata"]["answered_by"], expected,
        "{answered}"
    );
    server.stop().await;
}

#[tokio::test]
async fn under_auth_the_user_is_named() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let (_, session, agent) = server.as_token(&alice).session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, _) = server
        .as_token(&alice)
        .post(&format!("/clarification/{pending}/respond"), &answer())
        .await;
    assert_eq!(status, 200);
    let (_, view) = server
        .as_token(&alice)
        .get(&format!("/clarification/{pending}"))
        .await;
    assert_eq!(view["answered_by"]["user"], "alice", "{view}");
    let (status, _) = server
        .get(&format!("/clarification/{pending}/attempts"))
        .await;
    assert_eq!(status, 401, "the log is for whoever may see the bundle");
    server.stop().await;
}

#[tokio::test]
async fn a_20_way_race_leaves_one_winner_and_19_logged_losers() {
    let server = TestServer::start().await;
    for round in 0..5 {
        let (_, session, agent) = server.session(None).await;
        let pending = server.ask(&session, &agent, question()).await;
        let results = race_answers(&[&server], &pending, 20).await;
        let winners = results.iter().filter(|(_, b)| b["claimed"] == true).count();
        assert_eq!(winners, 1, "round {round}: {results:?}");

        let (status, log) = server
            .get(&format!("/clarification/{pending}/attempts"))
            .await;
        assert_eq!(status, 200, "{log}");
        let attempts = log["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 20, "round {round}: {log}");
        assert_eq!(attempts[0]["outcome"], "won", "{log}");
        for attempt in attempts {
            for key in ["user", "channel", "client", "at", "outcome"] {
                assert!(attempt.get(key).is_some(), "{key}: {attempt}");
            }
            assert_eq!(attempt["channel"], "rest");
        }
        let lost = attempts.iter().filter(|a| a["outcome"] == "lost").count();
        assert_eq!(lost, 19, "round {round}: {log}");
    }
    server.stop().await;
}

#[tokio::test]
async fn an_attempt_on_a_closed_bundle_is_logged_as_inactive() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, _) = server
        .post(&format!("/clarification/{pending}/cancel"), &json!({}))
        .await;
    assert!(status < 300, "cancelled");
    let (status, _) = server.respond(&pending, &answer()).await;
    assert_eq!(status, 409);
    let (_, log) = server
        .get(&format!("/clarification/{pending}/attempts"))
        .await;
    assert_eq!(log["attempts"].as_array().unwrap().len(), 1, "{log}");
    assert_eq!(log["attempts"][0]["outcome"], "inactive", "{log}");
    server.stop().await;
}
