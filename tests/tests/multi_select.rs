//! Multi-select questions (issue 16): `multi_select: true` is taken on
//! every way of asking (REST, MCP, `clarify ask -m`), stored with the
//! question, and shown wherever questions are listed; validation stays
//! N8's (several options are accepted on any question).

use clarify_tests::mcp::{call, connect, ok};
use clarify_tests::{TestServer, next_event};
use serde_json::{Value, json};

fn questions() -> Value {
    json!([
        {"prompt": "Which checks?", "multi_select": true,
         "options": [{"label": "lint"}, {"label": "test"}, {"label": "bench"}]},
        {"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}
    ])
}

#[tokio::test]
async fn multi_select_is_stored_and_shown_wherever_questions_are_listed() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, questions()).await;

    // GET /clarification/{id}: the key is always present.
    let (status, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["questions"][0]["multi_select"], true, "{view}");
    assert_eq!(view["questions"][1]["multi_select"], false, "{view}");

    // list_pending_questions_kandev.
    let external = connect(&server, "/mcp", None).await;
    let page = ok(&call(&external, "list_pending_questions_kandev", &json!({})).await);
    let listed = &page["bundles"][0]["questions"];
    assert_eq!(
        (&listed[0]["multi_select"], &listed[1]["multi_select"]),
        (&json!(true), &json!(false)),
        "{page}"
    );

    // The transcript's stored question.
    let (_, transcript) = server.get(&format!("/sessions/{session}/messages")).await;
    let first = transcript["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["question_id"] == "q1")
        .unwrap();
    assert_eq!(
        first["metadata"]["question"]["multi_select"], true,
        "{first}"
    );

    // Two options reach the agent as two ids.
    let answer = json!({"answers": [
        {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt3"]},
        {"question_id": "q2", "selected_options": ["q2_opt1"]}
    ]});
    let (status, body) = server.respond(&pending, &answer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1", "q1_opt3"])
    );
    server.stop().await;
}

#[tokio::test]
async fn the_agent_tool_offers_multi_select_and_stores_it() {
    let server = TestServer::start().await;
    let (_, session, agent_token) = server.session(None).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let tools = agent.list_all_tools().await.unwrap();
    let schema = serde_json::to_value(&tools[0].input_schema).unwrap();
    let question = schema["$defs"]["QuestionArg"]["properties"]["multi_select"].clone();
    assert_eq!(question["type"], "boolean", "{schema}");

    let mut events = server.events().await;
    let asking = tokio::spawn(async move {
        call(
            &agent,
            "ask_user_question_kandev",
            &json!({"questions": questions()}),
        )
        .await
    });
    let added = next_event(&mut events, "session.message.added").await;
    assert_eq!(added["payload"]["task_session_id"], session.as_str());
    let pending = added["payload"]["metadata"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["questions"][0]["multi_select"], true, "{view}");
    server.respond(&pending, &json!({"rejected": true})).await;
    asking.await.unwrap();
    server.stop().await;
}
