//! The gateway's heartbeat (Discord: "Sending heartbeats"): the first
//! after `heartbeat_interval` times a random jitter, then one every
//! interval; a heartbeat due while the last one is still unacknowledged
//! (no op 11) means the connection is a zombie, to be closed and resumed.

use std::time::Duration;

use tokio::time::Instant;

/// The heartbeat's clock for one connection.
#[derive(Debug)]
pub(super) struct Heartbeat {
    interval: Duration,
    next: Instant,
    acked: bool,
}

/// What to do when the heartbeat is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// Send one.
    Beat,
    /// The last one was never acknowledged: close and resume.
    Zombie,
}

impl Heartbeat {
    /// The clock of a connection whose hello said `interval`.
    pub(super) fn new(interval: Duration) -> Self {
        let jitter = rand::random::<f64>();
        Self {
            interval,
            next: Instant::now() + interval.mul_f64(jitter),
            acked: true,
        }
    }

    /// When the next heartbeat is due.
    pub(super) fn next(&self) -> Instant {
        self.next
    }

    /// The heartbeat fell due: whether to send one (and from now on wait
    /// for its acknowledgement), or give the connection up.
    pub(super) fn due(&mut self) -> Due {
        if !self.acked {
            return Due::Zombie;
        }
        self.acked = false;
        self.next = Instant::now() + self.interval;
        Due::Beat
    }

    /// Discord asked for one at once (op 1): sent outside the schedule.
    pub(super) fn sent_early(&mut self) {
        self.acked = false;
    }

    /// Op 11 came.
    pub(super) fn acked(&mut self) {
        self.acked = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unacknowledged_heartbeat_makes_the_next_one_a_zombie() {
        let mut beat = Heartbeat::new(Duration::from_secs(40));
        assert!(beat.next() <= Instant::now() + Duration::from_secs(40));
        assert_eq!(beat.due(), Due::Beat);
        beat.acked();
        assert_eq!(beat.due(), Due::Beat);
        assert_eq!(beat.due(), Due::Zombie, "no ACK in between");
    }
}
