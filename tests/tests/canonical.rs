//! N3a: one canonical answer payload, byte for byte, on every channel and
//! path — the REST winner, a REST loser's replay, the MCP replay, the
//! agent's wait, the resume webhook, and a wait after a restart.

use clarify_server::Config;
use clarify_tests::{Receiver, TestServer, mcp};
use serde_json::{Value, json};

fn questions() -> Value {
    json!([
        {"prompt": "Which database?", "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]},
        {"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}
    ])
}

/// The `answers` of a response, as the bytes they were sent in (the tests
/// read JSON keeping key order: serde_json's `preserve_order`).
fn answers_bytes(response: &Value) -> String {
    serde_json::to_string(&response["answers"]).unwrap()
}

#[tokio::test]
async fn n3a_the_answer_payload_is_byte_identical_on_every_channel_and_path() {
    let receiver = Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, questions()).await;
    // Out of order, duplicated and padded: the normalized form is the one.
    let answer = json!({"answers": [
        {"custom_text": "  for replicas ", "selected_options": ["q2_opt1"], "question_id": "q2"},
        {"selected_options": ["q1_opt2", "q1_opt2"], "question_id": "q1", "custom_text": ""}
    ]});
    let respond = format!("/clarification/{pending}/respond");
    let (_, won) = server.post(&respond, &answer).await;
    assert_eq!(won["claimed"], true, "{won}");
    let canonical = answers_bytes(&won["response"]);
    assert_eq!(
        canonical,
        r#"[{"question_id":"q1","selected_options":["q1_opt2"],"custom_text":""},{"question_id":"q2","selected_options":["q2_opt1"],"custom_text":"for replicas"}]"#
    );

    let (_, lost) = server.post(&respond, &json!({"rejected": true})).await;
    assert_eq!(lost["claimed"], false);
    assert_eq!(answers_bytes(&lost["response"]), canonical, "REST replay");

    let client = mcp::connect(&server, "/mcp", None).await;
    let replay = mcp::call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "rejected": true}),
    )
    .await;
    let structured = mcp::ok(&replay);
    assert_eq!(
        answers_bytes(&structured["response"]),
        canonical,
        "MCP structured replay"
    );
    let text: Value = serde_json::from_str(
        serde_json::to_value(&replay.content).unwrap()[0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        answers_bytes(&text["response"]),
        canonical,
        "MCP text replay"
    );
    client.cancel().await.unwrap();

    assert_eq!(
        answers_bytes(&receiver.last()["response"]),
        canonical,
        "resume webhook"
    );

    let (status, waited) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 200, "{waited}");
    assert_eq!(answers_bytes(&waited["response"]), canonical, "a wait");

    let restarted = server.replica_with(Config::default()).await;
    server.stop().await;
    let (status, view) = restarted.get(&format!("/clarification/{pending}")).await;
    assert_eq!(status, 200);
    assert_eq!(
        answers_bytes(&view["response"]),
        canonical,
        "a read after a restart"
    );
    restarted.stop().await;
}
