//! `ask_user_question_kandev` as an MCP task (issue 30 item 3, the tasks
//! extension `io.modelcontextprotocol/tasks`): a client that declares the
//! extension on its call gets a task at once instead of a call held open
//! for hours; `tasks/get` reports it, `tasks/cancel` detaches. The task is
//! the bundle ([`crate::lifecycle::TaskLook`]), so its id is the
//! `pending_id` and it survives reconnects, replicas and restarts.

use std::time::Duration;

use clarify_core::SessionId;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask, JsonObject, Task,
    TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;

use super::ask_tool::{self, AskArgs};
use super::result;
use crate::auth::Caller;
use crate::clock::rfc3339;
use crate::lifecycle::{self, Error, TaskLook, TaskState, WaitOutcome};
use crate::state::AppState;

/// How often a client is asked to poll: well within the grace an agent
/// stays attached after a look ([`crate::waiters::GRACE`], 30 s), so an
/// answer given while it polls is handed to it rather than resumed.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// How long past its question's expiry a task's TTL runs: a client that
/// treats the TTL as a backstop still sees the expired result.
const TTL_MARGIN: Duration = Duration::from_secs(60);

/// Whether this call's client declared the tasks extension (on the request
/// itself, as the 2026-07-28 era does, or at `initialize`).
pub fn wanted(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// Asks as a task: a task handle, or the result itself when the ask ended
/// at once (an identical question whose answer was kept for the agent).
pub async fn ask(
    state: &AppState,
    caller: &Caller,
    session_id: &SessionId,
    args: AskArgs,
) -> CallToolResponse {
    let asked = async {
        let (bundle, seconds) = args.into_bundle();
        let expires_in = lifecycle::expires_in(seconds)?;
        state
            .lifecycle
            .asking
            .ask_as_task(caller, session_id, &bundle, expires_in)
            .await
    };
    match asked.await {
        Ok(look) => match ended(&look) {
            Some(done) => CallToolResponse::Complete(done),
            None => CallToolResponse::Task(CreateTaskResult::new(task(&look, false))),
        },
        Err(error) => CallToolResponse::Complete(result::error(&error)),
    }
}

/// The task as `tasks/get` reports it.
pub fn detailed(look: &TaskLook) -> DetailedTask {
    let done = ended(look);
    let task = task(look, done.is_some());
    let payload = match (&look.state, done) {
        (TaskState::Cancelled, _) => TaskPayload::Cancelled,
        (_, Some(done)) => TaskPayload::Completed {
            result: to_object(&done),
        },
        (_, None) => TaskPayload::Working,
    };
    DetailedTask::new(task, payload)
}

/// A lifecycle error as the JSON-RPC error of a `tasks/*` request: an
/// unknown task (or another agent's) is `-32602`, as the extension says,
/// and so is a `taskId` no database takes (PostgreSQL refuses U+0000).
pub fn protocol_error(error: &Error) -> McpError {
    match error {
        Error::NotFound(_) | Error::Invalid(_) => McpError::invalid_params("unknown task", None),
        Error::Database(cause) => {
            tracing::error!(error = %cause, "internal error in an MCP task request");
            McpError::internal_error("internal error", None)
        }
        other => McpError::internal_error(other.to_string(), None),
    }
}

/// The result a completed task carries: the blocking call's own.
fn ended(look: &TaskLook) -> Option<CallToolResult> {
    let TaskState::Ended(outcome) = &look.state else {
        return None;
    };
    ask_tool::outcome_result(&look.task.pending_id, &look.questions, outcome).map(result::from)
}

/// The task's common fields; `done`: it has its result.
fn task(look: &TaskLook, done: bool) -> Task {
    let created_at = look.task.created_at;
    let (status, message) = match (&look.state, done) {
        (TaskState::Cancelled, _) => (
            TaskStatus::Cancelled,
            "the agent stopped waiting; the question stays open and its answer will resume the agent",
        ),
        (TaskState::Ended(WaitOutcome::Resolved(_)), _) => (TaskStatus::Completed, "answered"),
        (TaskState::Ended(WaitOutcome::Expired(_)), _) => {
            (TaskStatus::Completed, "expired unanswered")
        }
        (_, true) => (TaskStatus::Completed, ask_tool::CLOSED),
        (_, false) => (TaskStatus::Working, "waiting for the user's answer"),
    };
    let mut task = Task::new(
        look.task.pending_id.clone(),
        status,
        rfc3339(created_at),
        rfc3339(look.updated_at),
    )
    .with_status_message(message)
    .with_poll_interval_ms(millis(POLL_INTERVAL));
    // No expiry, no TTL (`null`): the task lasts as long as its question.
    task.ttl_ms = look.expires_at.map(|at| {
        let until = u64::try_from(at.saturating_sub(created_at) / 1000).unwrap_or(0);
        until.saturating_add(millis(TTL_MARGIN))
    });
    task
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn to_object(result: &CallToolResult) -> JsonObject {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}
