//! Workspaces' webhooks share the sends of a replica owner by owner
//! (issue 45 item 7-P5): one pool of 64 let 32 never-answering webhooks of
//! one owner hold every place for 10 s, delaying all other owners'
//! notices. Now an owner holds at most [`PER_OWNER`] sends, and an owner
//! with fewer than [`super::PER_TARGET`] in flight may always start one,
//! even while the pool is full, so nobody's share waits on another's.
//! Workspaces nobody owns share the pool itself.

use std::sync::Arc;

use tokio::sync::Notify;

use super::PER_TARGET;
use crate::quota::{Taken, Tally};

/// Sends to workspaces' webhooks in flight on one replica, beyond which
/// only owners below their guaranteed [`PER_TARGET`] start more.
pub const POOL: usize = 64;

/// Sends one owner's workspaces' webhooks hold at most on one replica:
/// four owners at their most fill the pool.
pub const PER_OWNER: usize = POOL / 4;

/// The sends in flight to workspaces' webhooks, per owner.
#[derive(Debug, Clone, Default)]
pub(super) struct Owners {
    sends: Tally,
}

/// One send's place in its owner's share; dropping it frees the place and
/// rings the wake it was taken with, so that what waited for it is sent.
pub(super) type Share = Taken;

impl Owners {
    /// A place for one send of `owner`'s, if their share has room.
    pub(super) fn take(&self, owner: &str, wake: &Arc<Notify>) -> Option<Share> {
        // Workspaces nobody owns (every one without auth) are the
        // operator's, not one user's: they share the pool, as before
        // shares, rather than one owner's part of it (review of issue 45).
        let share = if owner.is_empty() { POOL } else { PER_OWNER };
        self.sends.take_if(owner, Some(wake), |held| {
            let pool_full = held.total >= POOL && held.mine >= PER_TARGET;
            held.mine < share && !pool_full
        })
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
