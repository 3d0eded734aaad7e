//! rmcp's turns on `/mcp/agent`, shared out (issue 45 item 6 B1): at most
//! [`IN_RMCP`] requests at once, and under `--auth` at most [`SHARE`] of
//! them for one user ([`Caller::holder`], a user with the agents of the
//! sessions they created), so one user's requests, however many agent
//! tokens they mint, always leave the others most of the turns. Without
//! auth every caller is the one user, who has them all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::auth::Caller;

/// How many requests rmcp serves on `/mcp/agent` at once; the rest wait
/// their turn, holding only their request. A burst of agents would
/// otherwise each hold rmcp's per-call service (~46 KiB) while their
/// bundles queue for the writer, and the allocator keeps such a peak.
pub(super) const IN_RMCP: usize = 64;

/// The turns one user may hold at once under `--auth`.
pub(super) const SHARE: usize = IN_RMCP / 4;

/// Users' shares kept before unused ones are forgotten.
const FORGET_ABOVE: usize = 1024;

/// The turns, and each user's share of them.
#[derive(Debug)]
pub(super) struct Turns {
    all: Arc<Semaphore>,
    users: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A turn held; dropping it gives it back.
#[derive(Debug)]
pub(super) struct Turn {
    // Given back first, so that the user's entry can go when unused.
    _all: OwnedSemaphorePermit,
    mine: Option<(OwnedSemaphorePermit, String, Arc<Turns>)>,
}

impl Turns {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            all: Arc::new(Semaphore::new(IN_RMCP)),
            users: Mutex::default(),
        })
    }

    fn users(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Semaphore>>> {
        self.users.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for a turn for `caller`: one of its user's share first, then
    /// one of all; `None` only if the semaphores were closed, which they
    /// never are.
    pub(super) async fn take(self: &Arc<Self>, caller: Option<&Caller>) -> Option<Turn> {
        let mine = match caller {
            Some(caller) if !caller.sees_everything() => {
                let holder = caller.holder();
                let share = {
                    let mut users = self.users();
                    if users.len() > FORGET_ABOVE {
                        // Shares left by takes cancelled while they waited
                        // (their client went away), which no drop removed.
                        users.retain(|_, s| {
                            Arc::strong_count(s) > 1 || s.available_permits() < SHARE
                        });
                    }
                    users
                        .entry(holder.clone())
                        .or_insert_with(|| Arc::new(Semaphore::new(SHARE)))
                        .clone()
                };
                let permit = share.acquire_owned().await.ok()?;
                Some((permit, holder, self.clone()))
            }
            _ => None,
        };
        let all = self.all.clone().acquire_owned().await.ok()?;
        Some(Turn { _all: all, mine })
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let Some((permit, holder, turns)) = self.mine.take() else {
            return;
        };
        let share = permit.semaphore().clone();
        drop(permit);
        let mut users = turns.users();
        // Only the map and this clone: nobody holds or awaits the share.
        if Arc::strong_count(&share) == 2 && share.available_permits() == SHARE {
            users.remove(&holder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Agent;

    fn agent_of(user: &str) -> Caller {
        Caller::Agent(Agent {
            session_id: format!("session of {user}").into(),
            creator: Some(user.into()),
            scoped: true,
        })
    }

    /// Issue 45 item 6 B1: one user's requests take at most their share.
    #[tokio::test]
    async fn one_user_holds_at_most_a_share_and_the_others_get_theirs() {
        let turns = Turns::new();
        let alice = agent_of("alice");
        let mut held = Vec::new();
        for _ in 0..SHARE {
            held.push(turns.take(Some(&alice)).await.expect("a turn"));
        }
        let more = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            turns.take(Some(&alice)),
        );
        assert!(more.await.is_err(), "alice's share is taken");
        let bob = turns.take(Some(&agent_of("bob"))).await;
        assert!(bob.is_some(), "bob is not kept waiting by alice");
        drop(bob);
        held.clear();
        assert!(turns.users().is_empty(), "no share kept once unused");
    }
}
