//! The resources the API stores and lists: workspaces, tasks, sessions,
//! turns, transcript messages, users.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ResumeTarget;
use crate::session::{PendingAction, SessionState};

/// A workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Workspace {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The user who created it; `""` when auth is off.
    #[serde(default)]
    pub owner_id: String,
    /// When it was created.
    pub created_at: String,
}

/// A workspace's notifications (`GET`/`PUT /workspaces/{id}/notify`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WorkspaceNotify {
    /// The workspace.
    pub workspace_id: String,
    /// Where its notices are POSTed; `""` for nowhere (the server's own
    /// `--notify-webhook` targets still get them).
    pub webhook_url: String,
    /// The Slack channel its questions are posted to as well; `""` for
    /// none.
    #[serde(default)]
    pub slack_channel: String,
    /// The Discord channel its questions are posted to as well; `""` for
    /// none.
    #[serde(default)]
    pub discord_channel: String,
}

/// `GET /workspaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Workspaces {
    /// The caller's visible workspaces.
    pub workspaces: Vec<Workspace>,
}

/// A task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its workspace; `""` for none (D5).
    #[serde(default)]
    pub workspace_id: String,
    /// What the task is.
    pub title: String,
    /// More about it.
    #[serde(default)]
    pub description: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A task with its pending actions; both keys always present, `null` when
/// nothing waits (T1, T2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// `clarification` when any input-capable session has an active bundle.
    pub task_pending_action: Option<PendingAction>,
    /// The same for the task's first (primary) session.
    pub primary_session_pending_action: Option<PendingAction>,
    /// When anything last happened in it (RFC 3339 UTC): the newest of the
    /// task's own change, its newest message, and its newest question's
    /// settling (issue 29 item 4).
    #[serde(default)]
    pub last_activity_at: String,
    /// How its newest question stands: `pending` (waiting now),
    /// `answered`, `defaulted` (nobody answered: its defaults were chosen
    /// at expiry), `rejected`, `expired`, `cancelled`, `superseded` (left
    /// unanswered by a newer turn); `""` when it never asked.
    #[serde(default)]
    pub last_outcome: String,
}

/// `GET /tasks` (a page) and `list_tasks_kandev` (all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tasks {
    /// The caller's visible tasks, oldest first.
    pub tasks: Vec<TaskView>,
    /// Where the next page starts (`?cursor=`); `""` when this is the last.
    #[serde(default)]
    pub next_cursor: String,
}

/// An agent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Session {
    /// Its id.
    pub id: String,
    /// The task it works on.
    pub task_id: String,
    /// Its state.
    pub state: SessionState,
    /// What it is, in words (`clarify mcp`: the client and the branch);
    /// `""` when not said.
    #[serde(default)]
    pub description: String,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

/// A session with what it waits on (`GET /sessions/{id}`, and as a task
/// lists it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionView {
    /// The session.
    #[serde(flatten)]
    pub session: Session,
    /// `clarification` while it waits on a person, else `null` (T1).
    pub pending_action: Option<PendingAction>,
    /// Its active bundles (D4), oldest first: the server's word on what can
    /// be answered, which the overlay never infers from the transcript.
    #[serde(default)]
    pub active_pending_ids: Vec<String>,
}

/// `GET /tasks/{id}/sessions`, primary (oldest) first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Sessions {
    /// The task's sessions.
    pub sessions: Vec<SessionView>,
}

/// `POST /tasks/{id}/sessions`: the session and its agent token, shown
/// this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedSession {
    /// The session.
    #[serde(flatten)]
    pub session: Session,
    /// The token its agent authenticates with.
    pub agent_token: String,
    /// Where its agent is resumed, if anywhere.
    pub resume: Option<ResumeTarget>,
}

/// A turn: one stretch of agent work in a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Turn {
    /// Its id.
    pub id: String,
    /// Its session.
    pub task_session_id: String,
    /// When it started.
    pub started_at: String,
    /// When it completed; `null` while open.
    pub completed_at: Option<String>,
    /// When it was written.
    pub created_at: String,
}

/// One transcript row. A clarification question's `metadata` is read with
/// [`crate::ClarificationMetadata::from_json`], the server's own reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Message {
    /// Its id.
    pub id: String,
    /// Its session.
    pub task_session_id: String,
    /// Its task; may be `""` on legacy rows (M5).
    #[serde(default)]
    pub task_id: String,
    /// The turn it was written in.
    #[serde(default)]
    pub turn_id: String,
    /// `clarification_request`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// Text content.
    #[serde(default)]
    pub content: String,
    /// Its metadata, as stored.
    #[serde(default)]
    pub metadata: Value,
    /// When it was written.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// On a question of a declined bundle: why the person declined, when
    /// they said (issue 45 item 4); absent otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reject_reason: String,
}

/// `GET /sessions/{id}/messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Messages {
    /// A page of the transcript, oldest first.
    pub messages: Vec<Message>,
    /// Where the next page starts (`?cursor=`); `""` when this is the last.
    #[serde(default)]
    pub next_cursor: String,
}

/// A user (auth on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct User {
    /// Its id.
    pub id: String,
    /// Its unique name.
    pub name: String,
    /// When it was created.
    pub created_at: String,
}

/// `GET /auth/me`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    /// Whether the server requires an identity.
    pub auth_enabled: bool,
    /// Who the caller is; `null` when unknown or auth is off.
    pub user: Option<User>,
}
