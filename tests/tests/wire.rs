//! One set of wire types (issue 15): every body the server sends reads into
//! `clarify_core::api` and writes back to the very same JSON, so the
//! overlay, `clarify ask` and these tests, which all read through those
//! types, see exactly what the server says.

use clarify_core::api;
use clarify_tests::TestServer;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// `body` read as `T` and written back is `body`, key for key.
fn round_trips<T: DeserializeOwned + Serialize>(what: &str, body: &Value) -> T {
    let typed: T = serde_json::from_value(body.clone())
        .unwrap_or_else(|e| panic!("{what} does not read as its wire type: {e}\n{body}"));
    let again = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        &again, body,
        "{what} loses or adds fields on the way through its type"
    );
    typed
}

#[tokio::test]
async fn every_response_body_round_trips_through_its_core_type() {
    let server = TestServer::start().await;
    let (status, workspace) = server.post("/workspaces", &json!({"name": "w"})).await;
    assert_eq!(status, 201);
    let workspace: api::Workspace = round_trips("POST /workspaces", &workspace);
    round_trips::<api::Workspaces>("GET /workspaces", &server.get("/workspaces").await.1);

    let new_task = api::NewTask {
        workspace_id: Some(workspace.id),
        title: "t".into(),
        description: Some("d".into()),
        project: None,
    };
    let (status, task) = server
        .post("/tasks", &serde_json::to_value(&new_task).unwrap())
        .await;
    assert_eq!(status, 201, "{task}");
    let task: api::TaskView = round_trips("POST /tasks", &task);
    let task_id = task.task.id;
    round_trips::<api::Tasks>("GET /tasks", &server.get("/tasks").await.1);

    let new_session = api::NewSession {
        resume: Some(api::ResumeTarget::Webhook {
            webhook_url: "http://127.0.0.1:9/".into(),
        }),
        description: Some("Claude Code on main".into()),
    };
    let (status, session) = server
        .post(
            &format!("/tasks/{task_id}/sessions"),
            &serde_json::to_value(&new_session).unwrap(),
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let session: api::CreatedSession = round_trips("POST /tasks/{id}/sessions", &session);
    assert_eq!(session.resume, new_session.resume);

    let ask = api::Ask {
        bundle: serde_json::from_value(json!({"questions": [
            {"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]}))
        .unwrap(),
        ..api::Ask::default()
    };
    let (status, asked) = server
        .as_token(&session.agent_token)
        .post(
            "/clarification/request",
            &serde_json::to_value(&ask).unwrap(),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    let asked: api::Asked = round_trips("POST /clarification/request", &asked);
    let pending = asked.pending_id;

    let sessions = server.get(&format!("/tasks/{task_id}/sessions")).await.1;
    round_trips::<api::Sessions>("GET /tasks/{id}/sessions", &sessions);
    let one = server
        .get(&format!("/sessions/{}", session.session.id))
        .await
        .1;
    let one: api::SessionView = round_trips("GET /sessions/{id}", &one);
    assert_eq!(
        one.active_pending_ids,
        std::slice::from_ref(&pending),
        "the server names the active bundle"
    );
    let view = server.get(&format!("/clarification/{pending}")).await.1;
    let view: api::BundleView = round_trips("GET /clarification/{id}", &view);
    assert!(view.active);
    let messages = server
        .get(&format!("/sessions/{}/messages", session.session.id))
        .await
        .1;
    round_trips::<api::Messages>("GET /sessions/{id}/messages", &messages);

    let (status, cancelled) = server
        .post(&format!("/clarification/{pending}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200);
    round_trips::<api::Acknowledged>("POST /clarification/{id}/cancel", &cancelled);
    let (status, turn) = server
        .post(
            &format!("/sessions/{}/turns", session.session.id),
            &json!({}),
        )
        .await;
    assert_eq!(status, 201);
    round_trips::<api::Turn>("POST /sessions/{id}/turns", &turn);
    let (status, patched) = server
        .api()
        .patch(
            &format!("/sessions/{}", session.session.id),
            &json!({"state": "COMPLETED"}),
        )
        .await;
    assert_eq!(status, 200);
    let patched: api::Session = round_trips("PATCH /sessions/{id}", &patched);
    assert_eq!(patched.state, clarify_core::SessionState::Completed);
    round_trips::<api::Me>("GET /auth/me", &server.get("/auth/me").await.1);
    server.stop().await;
}

#[tokio::test]
async fn every_event_round_trips_through_its_core_type() {
    let server = TestServer::start().await;
    let mut socket = server.events().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let added = clarify_tests::next_event(&mut socket, "session.message.added").await;
    let event: api::Event = round_trips("a message event", &added);
    let api::Payload::Message(payload) = &event.payload else {
        panic!("a message event carries a MessageEvent: {added}");
    };
    assert_eq!(payload.message.metadata["pending_id"], pending.as_str());
    let task = clarify_tests::next_event(&mut socket, "task.updated").await;
    let task: api::Event = round_trips("a task event", &task);
    let api::Payload::Task(change) = &task.payload else {
        panic!("a task event carries a TaskChange: {:?}", task.payload);
    };
    assert_eq!(change.session_id, session);
    server.stop().await;
}
