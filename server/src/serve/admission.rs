//! Which connections are let in (issue 26): at most a cap of them at once,
//! set below the process's file limit. At the cap, a new connection takes
//! the place of the oldest one that has not yet sent a whole request (an
//! idle or slow-drip socket, or one whose body is still on its way, issue
//! 45 item 6 B2), so such sockets can never keep a real client out; with
//! none of those to evict, the new one is closed at once and counted.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The connections let in, and those of them still waiting for a whole
/// request.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    cap: usize,
    state: Arc<Mutex<State>>,
    refused: Arc<AtomicU64>,
}

#[derive(Debug, Default)]
struct State {
    /// Places taken.
    taken: usize,
    next_id: u64,
    /// Connections without a whole request yet, oldest first.
    fresh: BTreeMap<u64, Evict>,
}

/// How a fresh connection is told to go, its place handed on.
#[derive(Debug, Clone)]
struct Evict {
    token: CancellationToken,
    handed_on: Arc<AtomicBool>,
}

/// A connection let in: its place is held as long as this lives (the
/// socket's own lifetime, through an upgrade too).
#[derive(Debug)]
pub(crate) struct Admitted {
    /// Its place in the eviction order: renewed each time it becomes
    /// evictable again, so a stalled body goes after every socket idle
    /// since before it stalled.
    id: AtomicU64,
    /// Cancelled when a newer connection took the place.
    pub(crate) evicted: CancellationToken,
    /// Set when the place went to the newer connection: then dropping this
    /// frees nothing.
    handed_on: Arc<AtomicBool>,
    /// Whether it is in use (a whole request came): only the change takes
    /// the lock.
    used: AtomicBool,
    admission: Admission,
}

impl Admission {
    /// At most `cap` connections at once (at least one).
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            state: Arc::default(),
            refused: Arc::default(),
        }
    }

    /// Connections held now (the operator's gauge).
    pub(crate) fn held(&self) -> usize {
        self.lock().taken
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lets a new connection in, never waiting: with a place free, or with
    /// the place of the oldest connection without a request, which is told
    /// to go; `None` when it must be closed at once.
    pub(crate) fn admit(&self) -> Option<Admitted> {
        let mut state = self.lock();
        if state.taken < self.cap {
            state.taken += 1;
        } else if let Some((_, oldest)) = state.fresh.pop_first() {
            // The place changes hands now, so that a flood cannot evict
            // the same place twice; the evicted socket closes a moment
            // later (the headroom under the file limit covers it).
            oldest.handed_on.store(true, Ordering::Release);
            oldest.token.cancel();
        } else {
            drop(state);
            let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
            // A warning per power of two: counted, never a flood.
            if refused.is_power_of_two() {
                tracing::warn!(
                    cap = self.cap,
                    refused,
                    "connection refused: the server holds as many as it may, all in use"
                );
            }
            return None;
        }
        let id = state.next_id;
        state.next_id += 1;
        let evict = Evict {
            token: CancellationToken::new(),
            handed_on: Arc::default(),
        };
        state.fresh.insert(id, evict.clone());
        Some(Admitted {
            id: AtomicU64::new(id),
            evicted: evict.token,
            handed_on: evict.handed_on,
            used: AtomicBool::new(false),
            admission: self.clone(),
        })
    }
}

impl Admitted {
    /// The connection sent a whole request: it is no longer evicted for
    /// newcomers.
    pub(crate) fn in_use(&self) {
        // Every request passes here: the shared lock only on a change.
        if !self.used.swap(true, Ordering::AcqRel) {
            let mut state = self.admission.lock();
            state.fresh.remove(&self.id.load(Ordering::Acquire));
        }
    }

    /// The connection's request body stalls: evictable as an idle one is,
    /// after every one idle before now, until [`Admitted::in_use`].
    pub(crate) fn arriving(&self) {
        if !self.used.swap(false, Ordering::AcqRel) {
            // Fresh already.
            return;
        }
        let mut state = self.admission.lock();
        if !self.handed_on.load(Ordering::Acquire) {
            let id = state.next_id;
            state.next_id += 1;
            self.id.store(id, Ordering::Release);
            state.fresh.insert(
                id,
                Evict {
                    token: self.evicted.clone(),
                    handed_on: self.handed_on.clone(),
                },
            );
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut state = self.admission.lock();
        state.fresh.remove(&self.id.load(Ordering::Acquire));
        if !self.handed_on.load(Ordering::Acquire) {
            state.taken = state.taken.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_connection_without_a_request_makes_room() {
        let admission = Admission::new(2);
        let first = admission.admit().expect("room");
        let second = admission.admit().expect("room");
        second.in_use();
        // The third takes the first's place (no request yet), never the
        // second's.
        let third = admission.admit().expect("the first's place");
        assert!(first.evicted.is_cancelled());
        assert!(!second.evicted.is_cancelled());
        drop(first);
        third.in_use();
        // Both in use: a fourth is closed at once, and the first's going
        // freed nothing more.
        assert!(admission.admit().is_none());
        drop(third);
        assert!(admission.admit().is_some(), "a place came free");
        assert!(admission.admit().is_some(), "it was fresh: handed on");
    }

    /// Issue 45 item 6 B2.
    #[test]
    fn a_connection_whose_body_is_on_its_way_makes_room_too() {
        let admission = Admission::new(1);
        let first = admission.admit().expect("room");
        first.in_use();
        assert!(admission.admit().is_none(), "in use: kept");
        first.arriving();
        let second = admission.admit().expect("the first's place");
        assert!(first.evicted.is_cancelled());
        first.in_use();
        drop(first);
        second.in_use();
        assert!(admission.admit().is_none(), "its going freed nothing more");
    }

    /// Review of issue 45 item 6 B2: a body that stalls makes its
    /// connection evictable after every socket idle since before then,
    /// never before them.
    #[test]
    fn a_stalled_body_gives_way_after_the_sockets_idle_before_it() {
        let admission = Admission::new(2);
        let posting = admission.admit().expect("room");
        posting.in_use();
        let idle = admission.admit().expect("room");
        posting.arriving();
        let newcomer = admission.admit().expect("the idle one's place");
        assert!(idle.evicted.is_cancelled());
        assert!(!posting.evicted.is_cancelled());
        drop(idle);
        let next = admission.admit().expect("the stalled one's place");
        assert!(posting.evicted.is_cancelled());
        drop((newcomer, next));
    }
}
