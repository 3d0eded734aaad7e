//! Places counted by key and in total, each held by a guard that gives its
//! place back when dropped: the one counter behind every share of the
//! server (long waits and event sockets per user, notices' sends per
//! owner and per target). Each user of it says only when a place is
//! refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// Places taken, by key and in total; cheap to clone (one count shared).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    counts: Arc<Mutex<Counts>>,
}

/// What [`Tally::take`]'s rule sees of the count.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// Places the key holds.
    pub mine: usize,
    /// Places every key holds together.
    pub total: usize,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_key: HashMap<String, usize>,
}

/// One place held under a key; dropping it gives the place back (and
/// rings the `wake` it was taken with, so what waited for room goes on).
#[derive(Debug)]
pub struct Taken {
    key: String,
    counts: Arc<Mutex<Counts>>,
    wake: Option<Arc<Notify>>,
}

impl Tally {
    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place under `key` if `admit` allows one given what is held now;
    /// else `admit`'s refusal. Counted and decided under one lock, so two
    /// takers never both get the last place.
    ///
    /// # Errors
    /// What `admit` returned.
    pub fn take<E>(
        &self,
        key: &str,
        wake: Option<&Arc<Notify>>,
        admit: impl FnOnce(Held) -> Result<(), E>,
    ) -> Result<Taken, E> {
        let mut counts = self.lock();
        let mine = counts.by_key.get(key).copied().unwrap_or(0);
        admit(Held {
            mine,
            total: counts.total,
        })?;
        *counts.by_key.entry(key.to_owned()).or_default() += 1;
        counts.total += 1;
        Ok(Taken {
            key: key.to_owned(),
            counts: self.counts.clone(),
            wake: wake.cloned(),
        })
    }

    /// [`Self::take`] for a rule that only says yes or no.
    #[must_use]
    pub fn take_if(
        &self,
        key: &str,
        wake: Option<&Arc<Notify>>,
        admit: impl FnOnce(Held) -> bool,
    ) -> Option<Taken> {
        self.take(key, wake, |held| admit(held).then_some(()).ok_or(()))
            .ok()
    }

    /// What `key` holds, and all together.
    #[must_use]
    pub fn held(&self, key: &str) -> Held {
        let counts = self.lock();
        Held {
            mine: counts.by_key.get(key).copied().unwrap_or(0),
            total: counts.total,
        }
    }

    /// How many keys hold a place.
    #[must_use]
    pub fn keys(&self) -> usize {
        self.lock().by_key.len()
    }
}

impl Drop for Taken {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(mine) = counts.by_key.get_mut(&self.key) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                counts.by_key.remove(&self.key);
            }
        }
        drop(counts);
        if let Some(wake) = &self.wake {
            wake.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_most(n: usize) -> impl FnOnce(Held) -> Result<(), ()> {
        move |held| if held.mine < n { Ok(()) } else { Err(()) }
    }

    #[test]
    fn a_place_given_back_is_counted_no_more_and_rings_its_wake() {
        let tally = Tally::default();
        let wake = Arc::new(Notify::new());
        let a = tally.take("a", Some(&wake), at_most(2)).unwrap();
        let _a2 = tally.take("a", None, at_most(2)).unwrap();
        assert!(tally.take("a", None, at_most(2)).is_err());
        let _b = tally.take("b", None, at_most(2)).unwrap();
        assert_eq!(tally.held("a"), Held { mine: 2, total: 3 });
        assert_eq!(tally.keys(), 2);
        drop(a);
        assert_eq!(tally.held("a"), Held { mine: 1, total: 2 });
        let rung = wake.notified();
        tokio::pin!(rung);
        assert!(
            rung.as_mut().enable(),
            "the stored permit wakes the next waiter"
        );
    }

    #[test]
    fn racing_takers_never_pass_the_rule_together() {
        let tally = Tally::default();
        let held: Vec<_> = std::thread::scope(|scope| {
            let tasks: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| tally.take("k", None, at_most(3)).ok()))
                .collect();
            tasks
                .into_iter()
                .filter_map(|t| t.join().unwrap())
                .collect()
        });
        assert_eq!(held.len(), 3);
        assert_eq!(tally.held("k").mine, 3);
    }
}
