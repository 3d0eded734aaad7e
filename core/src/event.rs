//! The vocabulary of live events and transcript messages, shared by the
//! server that publishes them and the browser that reads them.

use serde::{Deserialize, Serialize};

/// What an event on `GET /api/v1/ws` announces (its `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventKind {
    /// A message was added to a session's transcript.
    #[serde(rename = "session.message.added")]
    MessageAdded,
    /// A message of a transcript changed (a question answered, detached, …).
    #[serde(rename = "session.message.updated")]
    MessageUpdated,
    /// A task or one of its sessions changed (state, pending action).
    #[serde(rename = "task.updated")]
    TaskUpdated,
    /// Events were missed (the socket dropped, or the reader fell behind):
    /// whoever listens reloads what it shows.
    #[serde(rename = "resync")]
    Resync,
}

impl EventKind {
    /// The wire spelling.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::MessageAdded => "session.message.added",
            Self::MessageUpdated => "session.message.updated",
            Self::TaskUpdated => "task.updated",
            Self::Resync => "resync",
        }
    }
}

/// The `type` of a transcript message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// One question of a clarification bundle.
    ClarificationRequest,
}

impl MessageKind {
    /// The wire (and stored) spelling.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ClarificationRequest => "clarification_request",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_spellings_match_serde() {
        for kind in [
            EventKind::MessageAdded,
            EventKind::MessageUpdated,
            EventKind::TaskUpdated,
            EventKind::Resync,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
        let kind = MessageKind::ClarificationRequest;
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}
