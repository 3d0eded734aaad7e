//! Workspaces' webhooks share the sends of a replica owner by owner
//! (issue 45 item 7-P5): one pool of 64 let 32 never-answering webhooks of
//! one owner hold every place for 10 s, delaying all other owners'
//! notices. Now an owner holds at most [`PER_OWNER`] sends, and an owner
//! with fewer than [`super::PER_TARGET`] in flight may always start one,
//! even while the pool is full, so nobody's share waits on another's.
//! Workspaces nobody owns share the pool itself.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use super::PER_TARGET;

/// Sends to workspaces' webhooks in flight on one replica, beyond which
/// only owners below their guaranteed [`PER_TARGET`] start more.
pub const POOL: usize = 64;

/// Sends one owner's workspaces' webhooks hold at most on one replica:
/// four owners at their most fill the pool.
pub const PER_OWNER: usize = POOL / 4;

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_owner: HashMap<String, usize>,
}

/// The sends in flight to workspaces' webhooks, per owner.
#[derive(Debug, Clone, Default)]
pub(super) struct Owners {
    counts: Arc<Mutex<Counts>>,
}

/// One send's place in its owner's share; dropping it frees the place and
/// rings `wake`, so that what waited for it is sent.
#[derive(Debug)]
pub(super) struct Share {
    owner: String,
    counts: Arc<Mutex<Counts>>,
    wake: Arc<Notify>,
}

impl Owners {
    /// A place for one send of `owner`'s, if their share has room.
    pub(super) fn take(&self, owner: &str, wake: &Arc<Notify>) -> Option<Share> {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = counts.by_owner.get(owner).copied().unwrap_or(0);
        let pool_full = counts.total >= POOL && mine >= PER_TARGET;
        // Workspaces nobody owns (every one without auth) are the
        // operator's, not one user's: they share the pool, as before
        // shares, rather than one owner's part of it (review of issue 45).
        let share = if owner.is_empty() { POOL } else { PER_OWNER };
        if mine >= share || pool_full {
            return None;
        }
        *counts.by_owner.entry(owner.to_owned()).or_default() += 1;
        counts.total += 1;
        Some(Share {
            owner: owner.to_owned(),
            counts: self.counts.clone(),
            wake: wake.clone(),
        })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(mine) = counts.by_owner.get_mut(&self.owner) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                counts.by_owner.remove(&self.owner);
            }
        }
        drop(counts);
        self.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_holds_a_share_and_every_other_owner_still_starts() {
        let (owners, wake) = (Owners::default(), Arc::new(Notify::new()));
        let a: Vec<Share> = (0..PER_OWNER)
            .map(|_| owners.take("a", &wake).expect("a's share"))
            .collect();
        assert!(owners.take("a", &wake).is_none(), "a holds its share");
        let others: Vec<Share> = ["b", "c", "d"]
            .into_iter()
            .flat_map(|o| (0..PER_OWNER).map(|_| owners.take(o, &wake).expect("room")))
            .collect();
        // The pool is full, yet a fifth owner starts its guaranteed sends.
        assert!(owners.take("b", &wake).is_none());
        let e: Vec<Share> = (0..PER_TARGET)
            .map(|_| owners.take("e", &wake).expect("e's guaranteed sends"))
            .collect();
        assert!(owners.take("e", &wake).is_none(), "beyond it, the pool");
        drop((a, others, e));
        assert!(owners.take("e", &wake).is_some(), "all freed");
    }

    #[test]
    fn unowned_workspaces_share_the_pool_not_one_owners_part() {
        let (owners, wake) = (Owners::default(), Arc::new(Notify::new()));
        let unowned: Vec<Share> = (0..POOL)
            .map(|_| owners.take("", &wake).expect("the pool"))
            .collect();
        assert!(owners.take("", &wake).is_none(), "the pool is full");
        drop(unowned);
    }
}
