//! A stand-in for the channels' connection keeper (`channels::keeper`,
//! landing on main), with its API, until this branch merges it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An event of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Starting.
    Start,
    /// Opened.
    Opened,
    /// A try failed.
    Failed,
    /// A working connection dropped.
    Dropped,
    /// Shutting down.
    Stop,
}

/// The registry of keepers.
#[derive(Debug, Clone, Default)]
pub struct Statuses;

impl Statuses {
    /// A keeper for `channel`.
    #[must_use]
    pub fn keeper(&self, _channel: &'static str, _mode: &'static str) -> Keeper {
        Keeper::default()
    }
}

/// Consecutive failures, and whether connected.
#[derive(Debug, Clone, Default)]
pub struct Keeper(Arc<Mutex<(u32, bool)>>);

impl Keeper {
    /// Applies `event`.
    pub fn on(&self, event: Event) {
        let mut state = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match event {
            Event::Opened => *state = (0, true),
            Event::Failed => *state = (state.0 + 1, false),
            Event::Dropped | Event::Stop => state.1 = false,
            Event::Start => {}
        }
    }

    /// Waits out the backoff; false at shutdown.
    pub async fn pause(&self, shutdown: &tokio_util::sync::CancellationToken) -> bool {
        let failures = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).0;
        let wait = match failures {
            0 => Duration::ZERO,
            f => (Duration::from_secs(1) * 2u32.pow(f.min(7) - 1)).min(Duration::from_secs(60)),
        };
        tokio::select! {
            () = shutdown.cancelled() => false,
            () = tokio::time::sleep(wait) => true,
        }
    }
}
