//! Waiting for an answer (A5a, A7): the asking agent attaches (an answer is
//! handed to it), anyone else who may see the bundle observes.

use clarify_core::PendingId;
use clarify_core::{RespondBody, Status};

use super::{Error, Reading, Result, Shared};
use crate::auth::Caller;
use crate::clock;
use crate::db::clarification::{self as repo, Bundle, Guard};
use crate::waiters::{Waiting, Wake};

/// How a wait ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Answered or rejected: the winner's outcome.
    Resolved(RespondBody),
    /// Nothing yet; wait again.
    TimedOut,
    /// Cancelled, expired with its session, or superseded: nobody will
    /// answer.
    Closed,
    /// Its time ran out unanswered (`expires_in_seconds`, `--question-ttl`):
    /// `status: "expired"`, no answers.
    Expired(RespondBody),
    /// The server is shutting down; wait again (elsewhere).
    ShuttingDown,
}

impl Shared {
    /// The agent collects an answer kept for it: delivered from now on.
    /// Guarded by the rows as read, so two collections write once.
    pub(super) async fn collect(&self, bundle: &Bundle) -> Result<()> {
        let pending_id = bundle.pending_id();
        let guard = Guard::Claim(bundle.updated_at());
        if repo::finalize(&self.db, pending_id, clock::now_micros(), guard).await? {
            tracing::info!(pending_id, "the agent collected its answer");
            self.publish_bundle(pending_id).await?;
        }
        Ok(())
    }
}

impl Reading {
    /// Long-polls for the bundle's resolution. Dropping the future (the
    /// client went away) unregisters the waiter.
    ///
    /// # Errors
    /// Unknown or foreign (not found), database errors.
    pub async fn wait(
        &self,
        caller: &Caller,
        pending_id: &PendingId,
        timeout: std::time::Duration,
    ) -> Result<WaitOutcome> {
        // Boxed, as every read below: a blocked wait then rests at the size
        // of its sleep, not of the largest query it ran (issue 31 item 3).
        let bundle = Box::pin(self.shared.authorized_bundle(caller, pending_id)).await?;
        let asking = clarify_core::delivery::attaches(caller.waiter(bundle.session_id()));
        if asking && bundle.detached() {
            // It came back: attached again, so an answer is handed to this
            // wait and not also resumed (found by delivery_sequences.rs).
            Box::pin(self.shared.reattach(pending_id.as_str())).await?;
        }
        // Only whose it is outlives the read: the rows are not held while
        // the wait blocks.
        drop(bundle);
        // Held while it blocks: one user's waits are bounded (issue 26).
        let _place = self.wait_place(caller)?;
        // Register before reading, so a resolution between the read and the
        // wait still wakes us. Delivery belongs to the asking agent (its
        // session's agent token, or a tokenless caller with auth off), who
        // attaches; anyone else who may see the bundle observes the outcome
        // without taking the delivery.
        let mut waiting = if asking {
            let waiting = self.shared.waiters.wait(pending_id);
            Box::pin(
                self.shared
                    .cluster
                    .attach(self.shared.db.pool(), pending_id),
            )
            .await?;
            waiting
        } else {
            self.shared.waiters.observe(pending_id)
        };
        self.await_outcome(pending_id, &mut waiting, timeout).await
    }

    /// Blocks on a registered waiter until the bundle is resolved or
    /// closed, `timeout` passes, or the server shuts down. Dropping the
    /// future leaves the bundle untouched.
    ///
    /// # Errors
    /// The bundle vanished (not found), database errors.
    pub async fn await_outcome(
        &self,
        pending_id: &PendingId,
        waiting: &mut Waiting,
        timeout: std::time::Duration,
    ) -> Result<WaitOutcome> {
        let pending_id = pending_id.as_str();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut seen = Seen::default();
        let mut woken = false;
        loop {
            match Box::pin(self.look(pending_id, waiting, &mut seen)).await? {
                Step::Done(outcome) => {
                    // The operator's wake latency: from the first wake of
                    // an answer to this wait holding it.
                    if let (true, WaitOutcome::Resolved(_), Some(since)) =
                        (woken, &outcome, waiting.woken_for())
                    {
                        self.shared
                            .measure
                            .observe("clarify_wake_seconds", &[], since);
                    }
                    return Ok(outcome);
                }
                Step::LookAgain => {}
                Step::Sleep => tokio::select! {
                    changed = waiting.wake.changed() => {
                        if changed.is_err() { return Ok(WaitOutcome::TimedOut); }
                        woken = true;
                    }
                    () = tokio::time::sleep_until(deadline) => return Ok(WaitOutcome::TimedOut),
                    () = self.shutdown.cancelled() => return Ok(WaitOutcome::ShuttingDown),
                },
            }
        }
    }

    /// One look at the bundle: its wake first, then its rows.
    async fn look(&self, pending_id: &str, waiting: &mut Waiting, seen: &mut Seen) -> Result<Step> {
        // Marked seen, so the sleep below waits for a newer wake. Only a
        // wake sent since this wait registered speaks for the rows: an
        // older one (rung for a wait that went away) says nothing of a
        // kept answer, which this agent's wait must collect (found by
        // delivery_sequences.rs: it was read from the old wake and left
        // awaiting pickup, to be collected again).
        let fresh = waiting.wake.has_changed().unwrap_or(false);
        let wake = waiting.wake.borrow_and_update().clone();
        if let (true, Wake::Resolved(response)) = (fresh, wake) {
            let status = if response.rejected {
                Status::Rejected
            } else {
                Status::Answered
            };
            return Ok(Step::Done(WaitOutcome::Resolved(RespondBody::new(
                true, status, response,
            ))));
        }
        // Activeness before the rows: a claim committing between the two
        // reads then shows up as a winner, never as "inactive, no winner".
        let active = repo::is_active(self.shared.db.pool(), pending_id).await?;
        let bundle = repo::load(self.shared.db.pool(), pending_id)
            .await?
            .ok_or(Error::NotFound("clarification request"))?;
        if let Some(w) = bundle.winner() {
            if bundle.awaits_pickup() {
                // Kept for the agent (pull delivery): its wait collects it;
                // anyone else only reads the outcome.
                if waiting.is_agent() {
                    self.shared.collect(&bundle).await?;
                }
                let response = Box::pin(self.winner_response(&bundle, &w)).await?;
                let body = RespondBody::new(true, w.status, response);
                return Ok(Step::Done(WaitOutcome::Resolved(body)));
            }
            if !bundle.delivery_pending() {
                // A live delivery that raced this read, or the rows: both
                // carry a decline's reason (kept beside the rows, issue 45
                // item 4), so nobody waits for another replica's wake.
                let live = match waiting.wake.borrow().clone() {
                    Wake::Resolved(response) | Wake::Staged(response) => Some(response),
                    _ => None,
                };
                let response = match live {
                    Some(response) => response,
                    None => Box::pin(self.winner_response(&bundle, &w)).await?,
                };
                let body = RespondBody::new(true, w.status, response);
                return Ok(Step::Done(WaitOutcome::Resolved(body)));
            }
        } else if !active {
            // Inactive with no winner on two looks in a row: closed. One is
            // not enough: a claim rolled back between the two reads above
            // looks inactive first and winnerless after, yet is answerable
            // again.
            if !seen.closed_once {
                seen.closed_once = true;
                return Ok(Step::LookAgain);
            }
            return Ok(Step::Done(if super::expiry::timed_out(&bundle) {
                WaitOutcome::Expired(super::expiry::expired_body(&bundle, pending_id))
            } else {
                WaitOutcome::Closed
            }));
        }
        seen.closed_once = false;
        Ok(Step::Sleep)
    }
}

/// What one look at a bundle decides, for the wait loop.
enum Step {
    /// The wait is over.
    Done(WaitOutcome),
    /// Look again at once.
    LookAgain,
    /// Nothing yet: sleep until a wake, the deadline or shutdown.
    Sleep,
}

/// What a wait has seen so far: the loop's only state.
#[derive(Debug, Default)]
struct Seen {
    /// The last look found it inactive without a winner.
    closed_once: bool,
}
