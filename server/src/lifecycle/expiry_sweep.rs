//! The expiry sweep (issue 26): every second each replica finds the bundles
//! that are due and handles each in a task of its own, so one that fails
//! (a refused resume, a database error) or waits on a slow webhook never
//! holds up the others. A failed bundle is tried again later, backing off;
//! defaults refused for [`GIVE_UP_AFTER`] give way to a plain expiry.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::expiry::Expiry;
use super::{Result, Sweeps};
use crate::clock::now_micros;
use crate::db::clarification as repo;

/// Due bundles looked at per pass, besides those already in hand.
const PER_PASS: usize = 200;

/// Bundles in hand at once on this replica at most (each a small task,
/// most waiting on a webhook bounded by its own timeout).
const IN_HAND: usize = 1024;

/// The first retry's delay after a failure; each next one doubles.
const FIRST_RETRY: Duration = Duration::from_secs(1);

/// The longest delay between two tries.
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// How long defaults whose delivery is refused are retried before the
/// bundle simply expires (the agent, resumed or not, learns it expired).
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(10 * 60);

/// This replica's bundles in hand and those waiting to be tried again.
#[derive(Debug, Default)]
struct Backlog {
    in_hand: HashSet<String>,
    retries: HashMap<String, Retry>,
}

/// A bundle that failed: when to try again, and since when it fails.
#[derive(Debug, Clone, Copy)]
struct Retry {
    failures: u32,
    next: Instant,
    since: Instant,
}

impl Retry {
    fn after(previous: Option<Self>, now: Instant) -> Self {
        let failures = previous.map_or(1, |r| r.failures.saturating_add(1));
        let delay = FIRST_RETRY
            .saturating_mul(2u32.saturating_pow(failures.saturating_sub(1).min(16)))
            .min(LONGEST_RETRY);
        Self {
            failures,
            next: now + delay,
            since: previous.map_or(now, |r| r.since),
        }
    }
}

type Shared = Arc<Mutex<Backlog>>;

fn lock(backlog: &Shared) -> std::sync::MutexGuard<'_, Backlog> {
    backlog.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sweeps {
    /// Expires what is due every `every` until `shutdown`.
    pub async fn sweep_expired(
        self,
        every: Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let backlog = Shared::default();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            if let Err(error) = self.expiry_pass(&backlog).await {
                tracing::warn!(%error, "the expiry sweep failed; it runs again shortly");
            }
        }
    }

    /// One look: every due bundle not in hand nor backing off is started.
    async fn expiry_pass(&self, backlog: &Shared) -> Result<()> {
        let skipped = {
            let b = lock(backlog);
            b.in_hand.len() + b.retries.len()
        };
        // Those skipped come back in the answer too: ask for that many more,
        // so that they can never crowd out the rest.
        let limit = PER_PASS + skipped;
        let due = repo::due(
            &self.shared.db,
            now_micros(),
            i64::try_from(limit).unwrap_or(i64::MAX),
        )
        .await?;
        let complete = due.len() < limit;
        let now = Instant::now();
        let mut b = lock(backlog);
        if complete {
            // A bundle backing off that is no longer due was closed some
            // other way: forget it.
            let seen: HashSet<&str> = due.iter().map(String::as_str).collect();
            b.retries
                .retain(|id, r| r.next > now || seen.contains(id.as_str()));
        }
        for pending_id in due {
            if b.in_hand.len() >= IN_HAND {
                break;
            }
            if b.in_hand.contains(&pending_id) {
                continue;
            }
            let give_up = match b.retries.get(&pending_id) {
                Some(retry) if retry.next > now => continue,
                Some(retry) => now.duration_since(retry.since) >= GIVE_UP_AFTER,
                None => false,
            };
            b.in_hand.insert(pending_id.clone());
            let (me, backlog) = (self.clone(), backlog.clone());
            tokio::spawn(async move {
                let outcome = me.expire_one(&pending_id, give_up).await;
                let mut b = lock(&backlog);
                b.in_hand.remove(&pending_id);
                let failed = match outcome {
                    Ok(Expiry::Done) => false,
                    Ok(Expiry::Refused) => {
                        tracing::warn!(
                            pending_id,
                            "its defaults were refused by its resume target; tried again later"
                        );
                        true
                    }
                    Err(error) => {
                        tracing::warn!(pending_id, %error, "not expired; tried again later");
                        true
                    }
                };
                if failed {
                    let previous = b.retries.get(&pending_id).copied();
                    b.retries
                        .insert(pending_id, Retry::after(previous, Instant::now()));
                } else {
                    b.retries.remove(&pending_id);
                }
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_a_second_to_half_a_minute_and_keep_their_start() {
        let start = Instant::now();
        let mut retry = None;
        let mut delays = Vec::new();
        for _ in 0..8 {
            let next = Retry::after(retry, start);
            delays.push((next.next - start).as_secs());
            assert_eq!(next.since, start);
            retry = Some(next);
        }
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
