//! What one user, with the agents of their sessions, may ask (issue 45
//! item 7-P4): how many questions they keep open, counted in the database,
//! and how fast they ask new ones, a token bucket per user on each
//! replica. Without auth nobody is limited: every session is the one
//! trusted user's, and there is nobody to be fair to.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Open (unanswered) questions one user may keep, by default
/// (`--max-open-questions`).
pub const MAX_OPEN_QUESTIONS: u32 = 400;

/// New asks one user may make at once, by default (`--ask-burst`).
pub const ASK_BURST: u32 = 30;

/// New asks per minute one user may make once their burst is spent, by
/// default (`--asks-per-minute`).
pub const ASKS_PER_MINUTE: u32 = 120;

/// Buckets kept before full ones (users idle long enough) are forgotten.
const FORGET_ABOVE: usize = 4096;

/// The bounds on asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskLimits {
    /// Open questions per user.
    pub max_open_questions: u32,
    /// New asks at once per user.
    pub burst: u32,
    /// New asks per minute per user after the burst.
    pub per_minute: u32,
}

impl Default for AskLimits {
    fn default() -> Self {
        Self {
            max_open_questions: MAX_OPEN_QUESTIONS,
            burst: ASK_BURST,
            per_minute: ASKS_PER_MINUTE,
        }
    }
}

/// Each user's bucket of asks on this replica.
#[derive(Debug)]
pub(super) struct AskRate {
    limits: AskLimits,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl AskRate {
    pub(super) fn new(limits: AskLimits) -> Self {
        Self {
            limits,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn limits(&self) -> AskLimits {
        self.limits
    }

    fn per_second(&self) -> f64 {
        f64::from(self.limits.per_minute.max(1)) / 60.0
    }

    /// Takes one ask for `user` now.
    ///
    /// # Errors
    /// How long until one comes free, when none is left.
    pub(super) fn take(&self, user: &str) -> Result<(), Duration> {
        self.take_at(user, Instant::now())
    }

    /// Gives back an ask taken for `user` whose bundle was never stored
    /// (its write failed): a failed ask costs nothing.
    pub(super) fn give_back(&self, user: &str) {
        let burst = f64::from(self.limits.burst.max(1));
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bucket) = buckets.get_mut(user) {
            bucket.tokens = (bucket.tokens + 1.0).min(burst);
        }
    }

    fn take_at(&self, user: &str, now: Instant) -> Result<(), Duration> {
        let burst = f64::from(self.limits.burst.max(1));
        let rate = self.per_second();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() > FORGET_ABOVE {
            // A full bucket is what a forgotten one starts as.
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst
            });
        }
        let bucket = buckets.entry(user.to_owned()).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let refilled = now.saturating_duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = (bucket.tokens + refilled).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_steady_rate_per_user() {
        let rate = AskRate::new(AskLimits {
            max_open_questions: 1,
            burst: 3,
            per_minute: 60,
        });
        let start = Instant::now();
        for _ in 0..3 {
            assert!(rate.take_at("alice", start).is_ok());
        }
        let wait = rate.take_at("alice", start).unwrap_err();
        assert!(wait > Duration::from_millis(900) && wait <= Duration::from_secs(1));
        assert!(rate.take_at("bob", start).is_ok(), "bob has his own");
        let later = start + Duration::from_secs(1);
        assert!(rate.take_at("alice", later).is_ok(), "one a second after");
        assert!(rate.take_at("alice", later).is_err());
    }

    #[test]
    fn an_ask_given_back_is_taken_again() {
        let rate = AskRate::new(AskLimits {
            max_open_questions: 10,
            burst: 1,
            per_minute: 1,
        });
        let now = Instant::now();
        assert!(rate.take_at("alice", now).is_ok());
        assert!(rate.take_at("alice", now).is_err());
        rate.give_back("alice");
        assert!(
            rate.take_at("alice", now).is_ok(),
            "the failed ask cost nothing"
        );
    }
}
