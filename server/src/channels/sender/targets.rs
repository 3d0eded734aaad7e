//! Per-target send permits (issue 26): a notification target holds at most
//! [`PER_TARGET`] sends at once on this replica, taken only when a row is
//! about to be claimed, so a slow or dead webhook delays its own notices
//! and nobody else's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

/// Sends in flight to one target at most.
pub const PER_TARGET: usize = 2;

/// The targets being sent to, and how many sends each has.
#[derive(Debug, Clone, Default)]
pub(super) struct Targets {
    busy: Arc<Mutex<HashMap<String, usize>>>,
}

/// One send's hold on its target; dropping it frees the place and rings
/// `wake` so that what waited for it is sent.
#[derive(Debug)]
pub(super) struct Permit {
    target: String,
    busy: Arc<Mutex<HashMap<String, usize>>>,
    wake: Arc<Notify>,
}

impl Targets {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many targets have a send in flight.
    pub(super) fn busy(&self) -> usize {
        self.lock().len()
    }

    /// How many more sends `target` may start now.
    pub(super) fn room(&self, target: &str) -> usize {
        PER_TARGET.saturating_sub(self.lock().get(target).copied().unwrap_or(0))
    }

    /// A place for one send to `target`, if it has room.
    pub(super) fn take(&self, target: &str, wake: &Arc<Notify>) -> Option<Permit> {
        let mut busy = self.lock();
        let sends = busy.entry(target.to_owned()).or_default();
        if *sends >= PER_TARGET {
            return None;
        }
        *sends += 1;
        Some(Permit {
            target: target.to_owned(),
            busy: self.busy.clone(),
            wake: wake.clone(),
        })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut busy = self.busy.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sends) = busy.get_mut(&self.target) {
            *sends = sends.saturating_sub(1);
            if *sends == 0 {
                busy.remove(&self.target);
            }
        }
        drop(busy);
        self.wake.notify_one();
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
