//! Live events for browsers (`GET /api/v1/ws`): a broadcast of
//! `{type: "notification", action, payload, timestamp}`, handed to a
//! [`Relay`] as well when there are other replicas (`crate::cluster`
//! implements it; this module depends on nothing but the clock).

use clarify_core::EventKind;
use clarify_core::api::Payload;
use std::sync::Arc;

use tokio::sync::broadcast;

use crate::clock;

/// Where events go besides this replica's subscribers: the other replicas.
pub trait Relay: std::fmt::Debug + Send + Sync {
    /// Hands `event` on, without waiting.
    fn relay(&self, event: Event);
}

/// One event as sent on the socket.
pub use clarify_core::api::Event;

/// The broadcast hub; cheap to clone.
#[derive(Debug, Clone)]
pub struct Events {
    sender: broadcast::Sender<Event>,
    relay: Option<Arc<dyn Relay>>,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(1024).0,
            relay: None,
        }
    }
}

impl Events {
    /// The same hub, also sending every event it publishes to `relay` (the
    /// other replicas).
    #[must_use]
    pub fn relayed_to(&self, relay: Option<Arc<dyn Relay>>) -> Self {
        Self {
            sender: self.sender.clone(),
            relay,
        }
    }

    /// Publishes an event to every subscriber (none is fine), here and on
    /// the other replicas.
    pub fn publish(&self, action: EventKind, payload: Payload) {
        let event = Event {
            kind: "notification".to_owned(),
            action,
            payload,
            timestamp: clock::rfc3339(clock::now_micros()),
        };
        if let Some(relay) = &self.relay {
            relay.relay(event.clone());
        }
        self.publish_here(event);
    }

    /// Publishes an event to this replica's subscribers only (one relayed
    /// from another replica).
    pub fn publish_here(&self, event: Event) {
        let _ = self.sender.send(event);
    }

    /// A new subscription.
    #[must_use]
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}
