//! Live events for browsers (`GET /api/v1/ws`): a broadcast of
//! `{type: "notification", action, payload, timestamp}`.

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::clock;

/// One event as sent on the socket.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// Always `notification`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `session.message.added`, `session.message.updated`, `task.updated`, …
    pub action: &'static str,
    /// The changed object.
    pub payload: Value,
    /// When it happened (RFC 3339).
    pub timestamp: String,
}

/// The broadcast hub; cheap to clone.
#[derive(Debug, Clone)]
pub struct Events {
    sender: broadcast::Sender<Event>,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(1024).0,
        }
    }
}

impl Events {
    /// Publishes an event to every subscriber (none is fine).
    pub fn publish(&self, action: &'static str, payload: Value) {
        let _ = self.sender.send(Event {
            kind: "notification",
            action,
            payload,
            timestamp: clock::rfc3339(clock::now_micros()),
        });
    }

    /// A new subscription.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}
