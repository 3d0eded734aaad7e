//! A channel's connection as one state machine (issue 48 items 1 and 4):
//! Slack's socket, Telegram's long poll, Discord's gateway and ntfy's
//! subscription all move through the same states, by the same events, so
//! what a dropped socket or a lost lease does is a row of one table, not a
//! patch in four loops.
//!
//! # Transitions
//!
//! Rows are states, columns events; a cell is the next state, `·` where
//! the event changes nothing there (a late report from a try already given
//! up, kept total so that no interleaving can panic or resurrect a
//! connection).
//!
//! | | `Start` | `HeldElsewhere` | `LeaseTaken` | `Opened` | `Failed` | `Dropped` | `LeaseLost` | `Stop` |
//! |---|---|---|---|---|---|---|---|---|
//! | Off | Connecting(0) | Standby | Connecting(0) | · | · | · | · | · |
//! | Standby | · | · | Connecting(0) | · | · | · | · | Off |
//! | Connecting(f) | · | Standby | · | Up | Retrying(f+1) | Retrying(f+1) | Standby | Off |
//! | Up | · | Standby | · | · | Retrying(1) | Retrying(0) | Standby | Off |
//! | Retrying(f) | Connecting(f) | Standby | · | · | · | · | Standby | Off |
//!
//! `Retrying(0)` reconnects at once: a connection that worked and dropped
//! (Slack's refresh, a restarted peer) is most likely back. Each failure
//! after that doubles the wait, from one second up to a minute, so a peer
//! that is down is not hammered and one that returns is found within a
//! minute. A lease lost or held elsewhere parks the connection in
//! `Standby` whatever it was doing: another replica holds it now.

use std::time::Duration;

/// Consecutive failures counted at most (the wait stops growing long
/// before).
const MAX_FAILURES: u32 = 32;

/// The first wait after a failure; each next one doubles.
pub const FIRST_WAIT: Duration = Duration::from_secs(1);

/// The longest wait between two tries.
pub const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// Where a channel's connection stands (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// Not started, or stopped.
    Off,
    /// Another replica holds the connection the service allows once.
    Standby,
    /// Opening, after `failures` consecutive failed tries.
    Connecting {
        /// Failed tries since the connection last worked.
        failures: u32,
    },
    /// Connected, polling or subscribed.
    Up,
    /// Waiting out [`Link::delay`] before the next try.
    Retrying {
        /// Failed tries since the connection last worked.
        failures: u32,
    },
}

/// What happened to a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// The channel begins, or a retry's wait is over.
    Start,
    /// Another replica holds the lease.
    HeldElsewhere,
    /// This replica took the lease.
    LeaseTaken,
    /// The connection is open (a socket's hello, a poll answered).
    Opened,
    /// A try to open failed, or the peer answered an error.
    Failed,
    /// An open connection ended.
    Dropped,
    /// This replica no longer holds the lease.
    LeaseLost,
    /// The server shuts down.
    Stop,
}

impl Link {
    /// The state `event` leads to from `self` (the module's table).
    #[must_use]
    pub fn transition(self, event: Event) -> Self {
        use Event as E;
        use Link as L;
        let more = |failures: u32| (failures + 1).min(MAX_FAILURES);
        match (self, event) {
            (L::Off, E::Start | E::LeaseTaken) | (L::Standby, E::LeaseTaken) => {
                L::Connecting { failures: 0 }
            }
            (L::Off, E::HeldElsewhere) => L::Standby,
            (L::Off, _) | (L::Standby, _) if event != E::Stop => self,
            (_, E::Stop) => L::Off,
            (_, E::HeldElsewhere | E::LeaseLost) => L::Standby,
            (L::Connecting { .. }, E::Opened) => L::Up,
            (L::Connecting { failures }, E::Failed | E::Dropped) => L::Retrying {
                failures: more(failures),
            },
            (L::Up, E::Failed) => L::Retrying { failures: 1 },
            (L::Up, E::Dropped) => L::Retrying { failures: 0 },
            (L::Retrying { failures }, E::Start) => L::Connecting { failures },
            _ => self,
        }
    }

    /// How long to wait before the next try: only in `Retrying`.
    #[must_use]
    pub fn delay(self) -> Option<Duration> {
        let Self::Retrying { failures } = self else {
            return None;
        };
        if failures == 0 {
            return Some(Duration::ZERO);
        }
        let doublings = (failures - 1).min(6);
        Some((FIRST_WAIT * 2u32.pow(doublings)).min(LONGEST_WAIT))
    }

    /// What a person is told of it: "connected", "retrying (3 failures)".
    #[must_use]
    pub fn phrase(self) -> String {
        match self {
            Self::Off => "off".to_owned(),
            Self::Standby => "standby (another replica holds it)".to_owned(),
            Self::Connecting { failures: 0 } => "connecting".to_owned(),
            Self::Connecting { failures } | Self::Retrying { failures } if failures > 0 => {
                format!("down, retrying ({failures} failed)")
            }
            Self::Retrying { .. } => "reconnecting".to_owned(),
            Self::Connecting { .. } | Self::Up => "connected".to_owned(),
        }
    }

    /// Whether a person should be told it is down.
    #[must_use]
    pub fn is_down(self) -> bool {
        matches!(
            self,
            Self::Connecting { failures } | Self::Retrying { failures } if failures > 0
        )
    }
}
