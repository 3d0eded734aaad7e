//! An agent's long wait as an MCP task (issue 30 item 3, the tasks
//! extension): a client that declares `io.modelcontextprotocol/tasks` on
//! its call gets a task at once; `tasks/get` reports it working, then
//! completed with the blocking call's own result (A5a, R7); `tasks/cancel`
//! detaches, so the answer then resumes the agent; the task is the bundle,
//! so it survives a restart; nobody else's token sees it. rmcp is the
//! client, in the 2026-07-28 era (capabilities on every request).

use clarify_tests::Receiver;
use clarify_tests::TestServer;
use clarify_tests::mcp::{ModernClient, connect_modern};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask,
    ErrorCode, GetTaskParams, TaskPayload, TaskStatus,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};

const TOOL: &str = "ask_user_question_kandev";

type Client = ModernClient;

async fn agent(server: &TestServer, token: &str, tasks: bool) -> Client {
    connect_modern(&server.url("/mcp/agent"), token, tasks).await
}

fn ask_args(prompt: &str, expires: Option<u64>) -> CallToolRequestParams {
    let mut args = json!({"questions": [{"prompt": prompt, "options": [{"label": "Keep"}, {"label": "Drop"}]}]});
    if let Some(seconds) = expires {
        args["expires_in_seconds"] = json!(seconds);
    }
    CallToolRequestParams::new(TOOL).with_arguments(args.as_object().unwrap().clone())
}

/// Asks `prompt` and expects a task.
async fn ask_task(client: &Client, prompt: &str, expires: Option<u64>) -> CreateTaskResult {
    match client.call_tool_once(ask_args(prompt, expires)).await {
        Ok(CallToolResponse::Task(task)) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn get(client: &Client, task_id: &str) -> Result<DetailedTask, ServiceError> {
    client
        .get_task(GetTaskParams::new(task_id))
        .await
        .map(|got| got.task)
}

/// The structured result of a completed task.
fn completed(task: &DetailedTask) -> Value {
    match &task.payload {
        TaskPayload::Completed { result } => result["structuredContent"].clone(),
        other => panic!("expected completed, got {other:?}"),
    }
}

fn code(error: &ServiceError) -> ErrorCode {
    match error {
        ServiceError::McpError(data) => data.code,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn pick_second() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": "too old"}]})
}

/// Asks as a task and then polls until the answer: working first, then
/// completed with what the blocking call returns (A5a).
#[tokio::test]
async fn a5a_a_task_reports_working_then_the_blocking_calls_result() {
    let server = TestServer::start().await;
    let (_, _, token) = server.session(None).await;
    let client = agent(&server, &token, true).await;

    let task = ask_task(&client, "Keep the legacy exporter?", None).await;
    assert_eq!(task.task.status, TaskStatus::Working);
    assert_eq!(task.task.ttl_ms, None, "no expiry: no TTL");
    assert_eq!(task.task.poll_interval_ms, Some(2000));
    let pending_id = task.task.task_id.clone();
    // The task is the bundle: a person sees it waiting under the same id.
    let (_, page) = server.get("/pending").await;
    assert!(
        page["bundles"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["pending_id"] == pending_id.as_str()),
        "{page}"
    );
    let polled = get(&client, &pending_id).await.unwrap();
    assert_eq!(polled.status(), TaskStatus::Working);

    let (status, won) = server.respond(&pending_id, &pick_second()).await;
    assert_eq!(
        (status, won["claimed"].as_bool()),
        (200, Some(true)),
        "{won}"
    );

    let done = get(&client, &pending_id).await.unwrap();
    let result = completed(&done);
    assert_eq!(result["pending_id"], pending_id.as_str());
    assert_eq!(result["answers"]["q1"]["selected_labels"], json!(["Drop"]));
    assert_eq!(result["answers"]["q1"]["custom_text"], "too old");
    assert_eq!(result["rejected"], false);
    assert!(done.task.last_updated_at >= done.task.created_at);
    // Asked again, the same: a task keeps its outcome.
    assert_eq!(completed(&get(&client, &pending_id).await.unwrap()), result);
    server.stop().await;
}

#[tokio::test]
async fn a_question_that_expires_completes_its_task_with_the_expiry() {
    let server = TestServer::start().await;
    let (_, _, token) = server.session(None).await;
    let client = agent(&server, &token, true).await;
    let task = ask_task(&client, "Ship on Friday?", Some(1)).await;
    // The TTL outlives the question by a minute, so the expiry is seen.
    let ttl = task.task.ttl_ms.expect("a TTL");
    assert!((60_000..=61_000).contains(&ttl), "{ttl}");
    let task_id = task.task.task_id;
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(100));
    let polling = async {
        loop {
            ticks.tick().await;
            let polled = get(&client, &task_id).await.unwrap();
            if polled.status() != TaskStatus::Working {
                return polled;
            }
        }
    };
    let done = tokio::time::timeout(std::time::Duration::from_secs(20), polling)
        .await
        .expect("the expiry within 20 s");
    let result = completed(&done);
    assert_eq!(
        (result["expired"].as_bool(), result["rejected"].as_bool()),
        (Some(true), Some(false))
    );
    server.stop().await;
}

#[tokio::test]
async fn a5a_cancelling_a_task_detaches_and_the_answer_resumes_the_agent() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, _, token) = server.session_resumed_by(&receiver).await;
    let client = agent(&server, &token, true).await;
    let task_id = ask_task(&client, "Rename the crate?", None)
        .await
        .task
        .task_id;

    client
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .unwrap();
    assert_eq!(
        get(&client, &task_id).await.unwrap().status(),
        TaskStatus::Cancelled
    );
    // The question stays open for a person to answer...
    let (_, view) = server.get(&format!("/clarification/{task_id}")).await;
    assert_eq!(view["status"], "pending", "{view}");
    let (status, won) = server.respond(&task_id, &pick_second()).await;
    assert_eq!(
        (status, won["claimed"].as_bool()),
        (200, Some(true)),
        "{won}"
    );
    // ...and its answer resumes the agent (R7), not the cancelled task.
    assert_eq!(receiver.count(), 1);
    assert_eq!(receiver.last()["pending_id"], task_id.as_str());
    assert_eq!(
        get(&client, &task_id).await.unwrap().status(),
        TaskStatus::Cancelled
    );
    // A second cancel is acknowledged and changes nothing.
    client
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .unwrap();
    server.stop().await;
}

/// R7: a task's answer is kept for its poll, never resumed as well, even
/// when no poll is in flight; a cancel after it leaves it the task's; a
/// declined task carries the reason though the rows keep none (R2b).
#[tokio::test]
async fn r7_an_answer_is_kept_for_the_tasks_poll_and_delivered_once() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, _, token) = server.session_resumed_by(&receiver).await;
    let client = agent(&server, &token, true).await;
    let task_id = ask_task(&client, "Vendor the parser?", None)
        .await
        .task
        .task_id;
    let (status, _) = server.respond(&task_id, &pick_second()).await;
    assert_eq!(status, 200);
    assert_eq!(receiver.count(), 0, "kept for the task, not resumed too");
    // Cancellation is cooperative: the answer came first, so it stands.
    client
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .unwrap();
    let done = get(&client, &task_id).await.unwrap();
    assert_eq!(
        completed(&done)["answers"]["q1"]["selected_labels"],
        json!(["Drop"])
    );
    assert_eq!(
        completed(&get(&client, &task_id).await.unwrap()),
        completed(&done)
    );
    assert_eq!(receiver.count(), 0);

    let declined = ask_task(&client, "Drop the v1 API?", None)
        .await
        .task
        .task_id;
    let body = json!({"rejected": true, "reject_reason": "ask the API team"});
    let (status, _) = server.respond(&declined, &body).await;
    assert_eq!(status, 200);
    let result = completed(&get(&client, &declined).await.unwrap());
    assert_eq!(
        (
            result["rejected"].as_bool(),
            result["reject_reason"].as_str()
        ),
        (Some(true), Some("ask the API team"))
    );
    assert_eq!(receiver.count(), 0);
    server.stop().await;
}

/// A question asked again after its task was cancelled is the agent's to
/// poll again: working, then its answer, not resumed.
#[tokio::test]
async fn asking_again_after_a_cancel_revives_the_task() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, _, token) = server.session_resumed_by(&receiver).await;
    let client = agent(&server, &token, true).await;
    let task_id = ask_task(&client, "Rotate the keys?", None)
        .await
        .task
        .task_id;
    client
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .unwrap();
    let again = ask_task(&client, "Rotate the keys?", None).await;
    assert_eq!(
        (again.task.task_id.as_str(), again.task.status),
        (task_id.as_str(), TaskStatus::Working)
    );
    let (status, _) = server.respond(&task_id, &pick_second()).await;
    assert_eq!(status, 200);
    assert_eq!(
        completed(&get(&client, &task_id).await.unwrap())["answers"]["q1"]["selected_labels"],
        json!(["Drop"])
    );
    assert_eq!(
        receiver.count(),
        0,
        "the revived task's answer is not resumed too"
    );
    server.stop().await;
}

#[tokio::test]
async fn r7_an_answer_racing_a_cancel_is_never_lost() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, _, token) = server.session_resumed_by(&receiver).await;
    let client = agent(&server, &token, true).await;
    let (mut by_task, mut by_resume) = (0, 0);
    for round in 0..20 {
        let task_id = ask_task(&client, &format!("Race round {round}?"), None)
            .await
            .task
            .task_id;
        let resumed_before = receiver.count();
        let body = pick_second();
        // Staggered a little more each round, one side then the other held
        // back, so that both orders come (how often each wins depends on
        // the database: the outcome may not, which is what is checked).
        let stagger = std::time::Duration::from_micros(500 * (round % 10));
        let (answer_after, cancel_after) = if round % 2 == 0 {
            (stagger, std::time::Duration::ZERO)
        } else {
            (std::time::Duration::ZERO, stagger)
        };
        let cancel = async {
            tokio::time::sleep(cancel_after).await;
            client
                .cancel_task(CancelTaskParams::new(task_id.as_str()))
                .await
        };
        let answer = async {
            tokio::time::sleep(answer_after).await;
            server.respond(&task_id, &body).await
        };
        let (cancelled, (status, won)) = tokio::join!(cancel, answer);
        cancelled.unwrap();
        assert_eq!(
            (status, won["claimed"].as_bool()),
            (200, Some(true)),
            "{won}"
        );
        let polled = get(&client, &task_id).await.unwrap();
        let resumed = receiver.count() - resumed_before;
        match polled.status() {
            TaskStatus::Completed => {
                assert_eq!(resumed, 0, "round {round}: delivered twice");
                assert_eq!(completed(&polled)["pending_id"], task_id.as_str());
                by_task += 1;
            }
            TaskStatus::Cancelled => {
                assert_eq!(resumed, 1, "round {round}: the answer was lost");
                assert_eq!(receiver.last()["pending_id"], task_id.as_str());
                by_resume += 1;
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
    assert_eq!(
        by_task + by_resume,
        20,
        "every round ended one of the two ways"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_task_survives_a_restart() {
    let server = TestServer::start().await;
    let (_, _, token) = server.session(None).await;
    let task_id = {
        let client = agent(&server, &token, true).await;
        ask_task(&client, "Split the monorepo?", None)
            .await
            .task
            .task_id
    };
    let server = server.restart().await;
    let client = agent(&server, &token, true).await;
    assert_eq!(
        get(&client, &task_id).await.unwrap().status(),
        TaskStatus::Working
    );
    let (status, _) = server.respond(&task_id, &pick_second()).await;
    assert_eq!(status, 200);
    let done = get(&client, &task_id).await.unwrap();
    assert_eq!(
        completed(&done)["answers"]["q1"]["selected_labels"],
        json!(["Drop"])
    );
    server.stop().await;
}

#[tokio::test]
async fn a3_another_agents_token_cannot_see_or_cancel_a_task() {
    let server = TestServer::start().await;
    let (_, _, token) = server.session(None).await;
    let (_, _, other) = server.session(None).await;
    let owner = agent(&server, &token, true).await;
    let stranger = agent(&server, &other, true).await;
    let task_id = ask_task(&owner, "Publish the benchmark?", None)
        .await
        .task
        .task_id;

    let seen = get(&stranger, &task_id).await.unwrap_err();
    assert_eq!(code(&seen), ErrorCode::INVALID_PARAMS, "as an unknown task");
    let cancelled = stranger
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .unwrap_err();
    assert_eq!(code(&cancelled), ErrorCode::INVALID_PARAMS);
    let unknown = get(&owner, "no-such-task").await.unwrap_err();
    assert_eq!(code(&unknown), ErrorCode::INVALID_PARAMS);
    // Still the owner's, untouched.
    assert_eq!(
        get(&owner, &task_id).await.unwrap().status(),
        TaskStatus::Working
    );
    server.stop().await;
}

#[tokio::test]
async fn a_client_without_the_extension_keeps_the_blocking_call() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let client = agent(&server, &token, false).await;
    let call = client.call_tool_once(ask_args("Keep the blocking call?", None));
    let answer = async {
        // The person answers once the question is listed.
        loop {
            let (_, page) = server.get("/pending").await;
            let listed = page["bundles"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["session_id"] == session.as_str());
            if let Some(pending) = listed.and_then(|b| b["pending_id"].as_str()) {
                return server.respond(pending, &pick_second()).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let (called, (status, _)) = tokio::join!(call, answer);
    assert_eq!(status, 200);
    let Ok(CallToolResponse::Complete(result)) = called else {
        panic!("expected the blocking result, got {called:?}");
    };
    let out = result.structured_content.unwrap();
    assert_eq!(out["answers"]["q1"]["selected_labels"], json!(["Drop"]));
    // tasks/* need the extension declared on the request itself.
    let refused = get(&client, out["pending_id"].as_str().unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        code(&refused),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
    );
    server.stop().await;
}
