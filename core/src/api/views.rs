//! Responses that are views rather than stored resources: a bundle as a
//! reader sees it, acknowledgements, and live events.

use alloc::string::String;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Message, User};
use crate::envelope::Response;
use crate::event::EventKind;
use crate::listing::PendingBundle;
use crate::provenance::AnsweredBy;
use crate::session::PendingAction;
use crate::status::Status;
use crate::view_status::ViewStatus;

/// `GET /clarification/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BundleView {
    /// The bundle as listed (L3/L4 shapes).
    #[serde(flatten)]
    pub bundle: PendingBundle,
    /// `pending`, `answered`, `rejected`, `cancelled`, `expired`, or
    /// [`crate::status::SUPERSEDED`].
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub status: ViewStatus,
    /// Whether it can still be answered (D4): the server says so, the
    /// browser never infers it.
    pub active: bool,
    /// Whether the agent stopped waiting (the answer will resume it).
    pub agent_disconnected: bool,
    /// Whether the agent is blocked on it right now (or polled moments ago).
    pub agent_waiting: bool,
    /// Answered, with nobody to hand the answer to yet: it is kept until
    /// the agent's next wait, identical ask or read collects it.
    #[serde(default)]
    pub awaiting_pickup: bool,
    /// The winner's response, `null` until resolved.
    pub response: Option<Response>,
    /// Who resolved it and how; `null` until resolved.
    #[serde(default)]
    pub answered_by: Option<AnsweredBy>,
}

/// `POST /clarification/request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Asked {
    /// The bundle's id (the same as `pending_id`).
    pub id: String,
    /// The bundle's id.
    pub pending_id: String,
    /// `false` when an identical active request already existed.
    pub created: bool,
}

/// `POST /auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoggedIn {
    /// Who logged in.
    pub user: User,
}

/// What cancel, detach and logout answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Acknowledged {
    /// Always `true`.
    pub success: bool,
    /// `cancelled` after a cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// `true` after a detach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_disconnected: Option<bool>,
}

/// A message event's payload: the message and its session's pending action
/// as it stands after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessageEvent {
    /// The message.
    #[serde(flatten)]
    pub message: Message,
    /// `clarification` while the session waits on a person (T1).
    pub pending_action: Option<PendingAction>,
}

/// One frame of `GET /api/v1/ws`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Event {
    /// Always `notification`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What it announces.
    pub action: EventKind,
    /// The changed object: a [`MessageEvent`] for message events,
    /// `{task_id, session_id}` for task events.
    pub payload: Value,
    /// When it happened (RFC 3339).
    pub timestamp: String,
}
