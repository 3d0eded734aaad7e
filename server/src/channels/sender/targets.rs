//! Per-target send permits (issue 26): a notification target holds at most
//! [`PER_TARGET`] sends at once on this replica, taken only when a row is
//! about to be claimed, so a slow or dead webhook delays its own notices
//! and nobody else's.

use std::sync::Arc;

use tokio::sync::Notify;

use crate::quota::{Taken, Tally};

/// Sends in flight to one target at most.
pub const PER_TARGET: usize = 2;

/// The targets being sent to, and how many sends each has.
#[derive(Debug, Clone, Default)]
pub(super) struct Targets {
    busy: Tally,
}

/// One send's hold on its target; dropping it frees the place and rings
/// the wake it was taken with, so that what waited for it is sent.
pub(super) type Permit = Taken;

impl Targets {
    /// How many targets have a send in flight.
    pub(super) fn busy(&self) -> usize {
        self.busy.keys()
    }

    /// How many more sends `target` may start now.
    pub(super) fn room(&self, target: &str) -> usize {
        PER_TARGET.saturating_sub(self.busy.held(target).mine)
    }

    /// A place for one send to `target`, if it has room.
    pub(super) fn take(&self, target: &str, wake: &Arc<Notify>) -> Option<Permit> {
        self.busy
            .take_if(target, Some(wake), |held| held.mine < PER_TARGET)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_holds_at_most_its_share_and_gets_it_back() {
        let (targets, wake) = (Targets::default(), Arc::new(Notify::new()));
        let held: Vec<Permit> = (0..PER_TARGET)
            .map(|_| targets.take("http://slow/", &wake).expect("room"))
            .collect();
        assert!(targets.take("http://slow/", &wake).is_none(), "full");
        assert_eq!(targets.room("http://slow/"), 0);
        assert!(
            targets.take("http://other/", &wake).is_some(),
            "others unaffected"
        );
        assert_eq!(targets.busy(), 1, "the other's permit was dropped at once");
        drop(held);
        assert_eq!(targets.room("http://slow/"), PER_TARGET);
        assert_eq!(targets.busy(), 0, "forgotten when idle");
    }
}
