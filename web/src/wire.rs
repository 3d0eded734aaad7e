//! The fields the overlay reads of tasks and sessions, at the top level
//! where the server's views put them. Read through `clarify_core`'s own
//! views, `#[serde(flatten)]` made the wasm carry a buffering deserializer
//! per type (issue 46: new pages had to fit the same wasm budget).

use clarify_core::api::BundleView;
use clarify_core::{AnsweredBy, PendingAction, PendingBundle, Response, ViewStatus};
use serde::Deserialize;

/// A task as the lists read it (`TaskView`, flattened).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TaskRow {
    pub id: String,
    pub title: String,
    pub task_pending_action: Option<PendingAction>,
    pub last_outcome: String,
    pub last_activity_at: String,
}

/// A page of tasks (`GET /tasks`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct TaskPage {
    pub tasks: Vec<TaskRow>,
    pub next_cursor: String,
}

/// A session as the pages read it (`SessionView`, flattened).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SessionRow {
    pub id: String,
    pub description: String,
    /// Its active bundles as the server counts them (D4), oldest first.
    pub active_pending_ids: Vec<String>,
}

/// `GET /tasks/{id}/sessions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SessionPage {
    pub sessions: Vec<SessionRow>,
}

/// What a bundle's view adds to the listed bundle.
#[derive(Debug, Deserialize)]
struct ViewTail {
    status: ViewStatus,
    #[serde(default)]
    active: bool,
    #[serde(default)]
    agent_disconnected: bool,
    #[serde(default)]
    agent_waiting: bool,
    #[serde(default)]
    awaiting_pickup: bool,
    #[serde(default)]
    response: Option<Response>,
    #[serde(default)]
    answered_by: Option<AnsweredBy>,
}

/// `GET /clarification/{id}` as the core's [`BundleView`]: read twice from
/// one parse, as the listed bundle (whose reader the inbox has anyway) and
/// as the view's own fields. Its `#[serde(flatten)]` was the last type
/// that brought serde's buffering reader into the wasm.
pub fn bundle_view(text: &str) -> Result<BundleView, String> {
    let (bundle, tail): (PendingBundle, ViewTail) = crate::json::parse_twice(text)?;
    Ok(BundleView {
        bundle,
        status: tail.status,
        active: tail.active,
        agent_disconnected: tail.agent_disconnected,
        agent_waiting: tail.agent_waiting,
        awaiting_pickup: tail.awaiting_pickup,
        response: tail.response,
        answered_by: tail.answered_by,
    })
}
