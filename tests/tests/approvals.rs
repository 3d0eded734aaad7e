//! Approvals on the wire (issue 47 item 1): an ask of kind `approval`
//! names the tool call it asks about; the call is checked like any text,
//! stored with the bundle, returned on every read, and part of what makes
//! two asks identical or alike, so one answer never allows two calls.

use clarify_tests::TestServer;
use serde_json::{Value, json};

fn approval(call: &str) -> Value {
    json!({"kind": "approval", "tool_call": {"tool": "Bash", "call": call},
        "questions": [{"prompt": "Allow Bash?",
            "options": [{"label": "Allow once"}, {"label": "Deny"}]}]})
}

async fn ask(server: &TestServer, session: &str, agent: &str, body: &Value) -> (u16, Value) {
    let mut body = body.clone();
    body["session_id"] = json!(session);
    server
        .as_token(agent)
        .post("/clarification/request", &body)
        .await
}

/// issue 47 item 1: the call comes back on the pending list and the
/// bundle view; a question says kind `question` and has no call.
#[tokio::test]
async fn an_approval_is_listed_and_viewed_with_its_call() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let (status, asked) = ask(&server, &session, &agent, &approval("rm -rf build/\nls")).await;
    assert_eq!(status, 201, "{asked}");
    let pending_id = asked["pending_id"].as_str().unwrap();
    let (_, page) = server.get("/pending").await;
    let listed = &page["bundles"][0];
    assert_eq!(listed["kind"], "approval", "{listed}");
    assert_eq!(
        listed["tool_call"],
        json!({"tool": "Bash", "call": "rm -rf build/\nls"})
    );
    let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["kind"], "approval");
    assert_eq!(view["tool_call"]["call"], "rm -rf build/\nls");

    let question = json!({"session_id": session, "questions": [{"prompt": "Which?",
        "options": [{"label": "a"}, {"label": "b"}]}]});
    let (_, asked) = server
        .as_token(&agent)
        .post("/clarification/request", &question)
        .await;
    let (_, view) = server
        .get(&format!(
            "/clarification/{}",
            asked["pending_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(view["kind"], "question");
    assert!(view.get("tool_call").is_none(), "{view}");
}

/// issue 47 item 1: each rule broken alone is a 400 naming its field.
#[tokio::test]
async fn a_wrong_approval_is_refused_naming_the_field() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let mut no_call = approval("ls");
    no_call.as_object_mut().unwrap().remove("tool_call");
    let mut on_question = approval("ls");
    on_question.as_object_mut().unwrap().remove("kind");
    let mut no_tool = approval("ls");
    no_tool["tool_call"]["tool"] = json!(" ");
    // Judged as sent, before the trim, as the contract's maxLength says.
    let mut padded = approval("ls");
    padded["tool_call"]["tool"] = json!(format!("  {}", "a".repeat(199)));
    let cases = [
        (no_call, "tool_call: "),
        (on_question, "tool_call: "),
        (no_tool, "tool_call.tool: "),
        (padded, "tool_call.tool: "),
        (approval(&"x".repeat(20_001)), "tool_call.call: "),
        (approval("a\u{0}b"), "tool_call.call: "),
    ];
    for (body, field) in cases {
        let (status, error) = ask(&server, &session, &agent, &body).await;
        assert_eq!(status, 400, "{error}");
        assert!(
            error["error"].as_str().unwrap().starts_with(field),
            "{error}"
        );
    }
    let mut kind = approval("ls");
    kind["kind"] = json!("vote");
    let (status, _) = ask(&server, &session, &agent, &kind).await;
    assert!(matches!(status, 400 | 422), "{status}");
}

/// issue 47 item 1: the same question about another call is another
/// bundle, listed under another `similar_key`, and one answer for both
/// is refused.
#[tokio::test]
async fn approvals_of_two_calls_are_never_one_answer() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let (_, first) = ask(&server, &session, &agent, &approval("npm test")).await;
    let (_, again) = ask(&server, &session, &agent, &approval("npm test")).await;
    assert_eq!(
        first["pending_id"], again["pending_id"],
        "an identical ask is one bundle"
    );
    let (_, other) = ask(&server, &session, &agent, &approval("npm publish")).await;
    assert_ne!(first["pending_id"], other["pending_id"]);
    let (_, page) = server.get("/pending").await;
    let keys: Vec<&Value> = page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["similar_key"])
        .collect();
    assert_ne!(keys[0], keys[1]);
    let (status, error) = server
        .post(
            "/clarification/respond-alike",
            &json!({"pending_ids": [first["pending_id"], other["pending_id"]],
                "response": {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}}),
        )
        .await;
    assert_eq!(status, 400, "{error}");
}
