//! Responses that are views rather than stored resources: a bundle as a
//! reader sees it, acknowledgements, and live events.

use alloc::boxed::Box;
use alloc::string::String;

use serde::{Deserialize, Serialize};

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
    /// `{task_id, session_id}` for task events, `null` for `resync`.
    #[cfg_attr(feature = "openapi", schema(value_type = Object, nullable))]
    pub payload: Payload,
    /// When it happened (RFC 3339).
    pub timestamp: String,
}

/// What an event carries (`Event.payload`), typed from where it is made to
/// where it is read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Payload {
    /// A transcript message and its session's pending action.
    Message(Box<MessageEvent>),
    /// Which task and session changed.
    Task(TaskChange),
    /// Nothing (`resync`): `null`.
    None,
}

impl Payload {
    /// The session the event is about.
    #[must_use]
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::Message(event) => Some(&event.message.task_session_id),
            Self::Task(change) => Some(&change.session_id),
            Self::None => None,
        }
    }

    /// The task the event is about (`""` on a legacy message without one).
    #[must_use]
    pub fn task_id(&self) -> Option<&str> {
        match self {
            Self::Message(event) => Some(&event.message.task_id),
            Self::Task(change) => Some(&change.task_id),
            Self::None => None,
        }
    }
}

/// Read by shape, not by trying each variant (serde's untagged reader):
/// a message has a `type`, `null` is nothing, anything else is a task's.
/// The overlay's wasm carries this reader; the untagged one, trying
/// `MessageEvent`'s flattened reader, cost it 6 KB after gzip.
impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = serde_json::Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(Self::None);
        }
        if value.get("type").is_some() {
            // The message and its pending action read apart: `MessageEvent`'s
            // own (flattened) reader would bring serde's buffering into the
            // overlay's wasm.
            let pending_action = match value.get("pending_action") {
                Some(action) => {
                    Option::<PendingAction>::deserialize(action).map_err(D::Error::custom)?
                }
                None => None,
            };
            let message = Message::deserialize(value).map_err(D::Error::custom)?;
            return Ok(Self::Message(Box::new(MessageEvent {
                message,
                pending_action,
            })));
        }
        TaskChange::deserialize(value)
            .map(Self::Task)
            .map_err(D::Error::custom)
    }
}

/// A task event's payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskChange {
    /// The task.
    pub task_id: String,
    /// Its session that changed.
    pub session_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_payload_reads_back_as_its_own_kind() {
        let task: Payload =
            serde_json::from_value(json!({"task_id": "t", "session_id": "s"})).unwrap();
        assert_eq!(task.session_id(), Some("s"));
        assert!(matches!(task, Payload::Task(_)));
        let message = json!({"id": "m", "task_session_id": "s", "task_id": "t",
            "type": "clarification_request", "metadata": {}, "created_at": "x",
            "updated_at": "x", "pending_action": null});
        let message: Payload = serde_json::from_value(message).unwrap();
        assert!(matches!(message, Payload::Message(_)), "{message:?}");
        assert_eq!(message.task_id(), Some("t"));
        let none: Payload = serde_json::from_value(json!(null)).unwrap();
        assert_eq!(none, Payload::None);
        assert_eq!(serde_json::to_value(&none).unwrap(), json!(null));
    }
}

/// How one bundle of a `respond-alike` ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AlikeOutcome {
    /// The bundle.
    pub pending_id: String,
    /// Whether this answer won its claim (R10).
    pub claimed: bool,
    /// Its resolution when it has one (this answer's, or an earlier
    /// winner's); `null` when it closed unanswered (409 on its own).
    pub status: Option<Status>,
    /// The winner's response; `null` when it closed unanswered.
    pub response: Option<Response>,
    /// Why it was not settled now (`""` when it was): the answer could not
    /// be delivered to its agent, so it is still open, or an internal
    /// error. One bundle failing neither undoes nor hides the others.
    #[serde(default)]
    pub error: String,
}

/// `POST /clarification/respond-alike`: each bundle's outcome, in the
/// order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AlikeOutcomes {
    /// One per bundle.
    pub outcomes: alloc::vec::Vec<AlikeOutcome>,
}
