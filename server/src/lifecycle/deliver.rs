//! Delivering a won claim (R7): live to the attached agent, through the
//! session's resume target, or kept for the agent to collect (pull
//! delivery); a target that refuses rolls the claim back (R7a).
//!
//! After the claim every path ends in "delivered" (or kept) or "open
//! again": a failing write takes the claim back (guarded by its token, so a
//! claim reconciliation already took is left alone), and what fails after
//! the agent has the answer is logged, never reported to the answerer. What
//! even that cannot mend, the periodic sweep does (R6).

use clarify_core::delivery::{self, Facts, Route};
use clarify_core::{Outcome, Response, SessionState, agent_text};

use super::{Error, Resolving, Result};
use crate::clock::now_micros;
use crate::db::batch::Batch;
use crate::db::clarification::{self as repo, Bundle, Guard, Mark};
use crate::db::{mcp_tasks, sessions};
use crate::resume::{ResumePayload, ResumeTarget};
use crate::waiters::Wake;

/// How often a restore after a refused dispatch is tried before the claim
/// is left to the sweep.
const RESTORE_TRIES: u32 = 3;

impl Resolving {
    /// Delivers the answer claimed under `token`, or takes the claim back
    /// and says why.
    ///
    /// # Errors
    /// [`Error::Undelivered`] when no target accepted it (rolled back);
    /// database errors before the agent had it (rolled back too).
    pub(super) async fn deliver(&self, won: &Won<'_>) -> Result<()> {
        let Won {
            bundle,
            response,
            token,
            ..
        } = *won;
        let pending_id = response.pending_id.as_str();
        let handed = self.hand_over(won).await;
        match handed {
            Ok(Handed::Live) => {}
            Ok(Handed::Resumed) => {
                // Observers (readers who are not the agent) learn the
                // outcome too; the session's state moved with the successor
                // turn.
                self.shared
                    .wake(pending_id, &Wake::Resolved(response.clone()));
                self.publish_after_delivery(won).await;
                return Ok(());
            }
            Ok(Handed::Stored) => {
                // Observers (readers who are not the agent) learn the outcome too.
                self.shared
                    .wake(pending_id, &Wake::Resolved(response.clone()));
            }
            Ok(Handed::Refused) => {
                self.take_back(pending_id, token).await;
                return Err(Error::Undelivered);
            }
            Err(error) => {
                tracing::error!(pending_id, %error, "delivery failed after the claim; reopening the question");
                self.take_back(pending_id, token).await;
                return Err(error);
            }
        }
        // The agent has the answer, or it is kept for it: nothing below may
        // report a failure to the answerer.
        let session_id = bundle.session_id();
        let now = now_micros();
        let moved = self
            .shared
            .db
            .write(async |c| {
                let from = [SessionState::WaitingForInput];
                sessions::transition(c, session_id, &from, SessionState::Running, now).await
            })
            .await;
        if let Err(error) = moved {
            tracing::warn!(pending_id, %error, "delivered, but the session's state was not updated");
        }
        self.publish_after_delivery(won).await;
        Ok(())
    }

    /// Tells browsers what a delivery changed; a failure is only logged.
    async fn publish_after_delivery(&self, won: &Won<'_>) {
        let pending_id = won.response.pending_id.as_str();
        if let Err(error) = self.shared.publish_bundle(pending_id).await {
            tracing::warn!(pending_id, %error, "delivered, but browsers were not told");
        }
        self.shared
            .publish_session(won.bundle.session_id(), won.bundle.task_id())
            .await;
    }

    /// Hands the answer over by the route the delivery machine picks
    /// ([`clarify_core::delivery::route`]) from what is read now.
    async fn hand_over(&self, won: &Won<'_>) -> Result<Handed> {
        let Won {
            bundle,
            outcome,
            response,
            token,
            detached,
            polled,
            ..
        } = *won;
        let pending_id = response.pending_id.as_str();
        let ours = Guard::Claim(token);
        // What decides the route, read now: an agent may have attached
        // since the claim; a target is read only when it can matter.
        let declined = matches!(outcome, Outcome::Rejected { .. });
        let attached = !polled && !detached && self.agent_blocked(bundle).await;
        let target = if polled || attached || declined {
            None
        } else if let Some(marked) = won.marked {
            Some(marked.clone())
        } else {
            self.resume_target(bundle.session_id()).await?
        };
        let facts = Facts {
            polled,
            attached,
            declined,
            has_target: target.is_some(),
        };
        match (delivery::route(facts), target) {
            // An MCP task: kept for its agent's next poll, which collects
            // it, never resumed as well; a decline's reason is kept with
            // the task too.
            (Route::Keep, _) if polled => self.keep_for_task(pending_id, response, token).await,
            (Route::Live, _) => {
                // Final before the wake: a waiter that reads the claim still
                // in delivery sleeps until the wake.
                let finalize = repo::finalize(&self.shared.db, pending_id, now_micros(), ours);
                Ok(if self.hand_live(response, finalize).await? {
                    Handed::Live
                } else {
                    Handed::Refused
                })
            }
            (Route::Store, _) => {
                // R9: a decline nobody waits for is stored, never resumed.
                let stored =
                    repo::finalize(&self.shared.db, pending_id, now_micros(), ours).await?;
                Ok(if stored {
                    Handed::Stored
                } else {
                    Handed::Refused
                })
            }
            (Route::Resume, Some(target)) => self.resume(won, &target).await,
            // Pull delivery: nobody to hand it to, so it is kept until the
            // agent's next wait, identical ask or read collects it.
            (Route::Keep | Route::Resume, _) => self.keep(pending_id, token).await,
        }
    }

    /// Keeps the answer claimed under `token` for the MCP task's next poll.
    async fn keep_for_task(
        &self,
        pending_id: &str,
        response: &Response,
        token: i64,
    ) -> Result<Handed> {
        // Written for every decline, an empty reason too: one left by a
        // decline taken back (R7a) must not be shown with this one.
        let reason = response.reject_reason.as_str();
        if response.rejected {
            self.shared
                .db
                .write(async |c| mcp_tasks::set_reject_reason(c, pending_id, reason).await)
                .await?;
        }
        self.keep(pending_id, token).await
    }

    /// Keeps the answer claimed under `token` for its agent to collect.
    async fn keep(&self, pending_id: &str, token: i64) -> Result<Handed> {
        let kept = repo::mark(
            &self.shared.db,
            pending_id,
            now_micros(),
            token,
            Mark::AwaitingPickup,
        )
        .await?;
        Ok(if kept {
            Handed::Stored
        } else {
            Handed::Refused
        })
    }

    /// Resumes the agent through `target` with the answer claimed under
    /// `token`.
    async fn resume(&self, won: &Won<'_>, target: &ResumeTarget) -> Result<Handed> {
        let Won {
            bundle,
            questions,
            outcome,
            response,
            token,
            ..
        } = *won;
        let pending_id = response.pending_id.as_str();
        let session_id = bundle.session_id();
        let prompt = agent_text::resume_prompt(questions, outcome);
        let payload = ResumePayload {
            session_id,
            task_id: bundle.task_id(),
            pending_id,
            prompt: &prompt,
            response,
        };
        let ours = if won.marked.is_some() {
            Guard::Claim(token)
        } else {
            let marked_at = now_micros();
            let mark = Mark::ResumeAttempted;
            if !repo::mark(&self.shared.db, pending_id, marked_at, token, mark).await? {
                // No longer ours to deliver: reconciliation took the claim
                // back (this replica looked dead), so nothing may reach
                // the agent.
                tracing::warn!(pending_id, "claim reconciled before its resume");
                return Ok(Handed::Refused);
            }
            Guard::Claim(marked_at)
        };
        let accepted = self.resumer.dispatch(target, &payload).await;
        self.shared.measure.resumed(target, accepted);
        if !accepted {
            // Marked as attempted, so the sweep would keep it: the restore
            // must happen here.
            self.restore_refused(pending_id, ours).await;
            return Ok(Handed::Refused);
        }
        // Dispatched: the agent has the answer. It continues in a successor
        // turn, created only now that the dispatch was accepted, in one
        // transaction with the claim made final and the session back to
        // RUNNING. What fails now is logged, never reported: the sweep
        // finalizes a claim whose resume was attempted (R6).
        // All of it is one trip to the database (issue 17).
        let now = now_micros();
        let settled = async {
            // The answer is on disk with its claim, marked resumed (R6):
            // what follows, lost with a crash of PostgreSQL, is made good
            // as a settle that failed is (the sweep finalizes the claim),
            // so its commit does not wait for the disk: one WAL flush per
            // answer (issue 31).
            let mut tx = self.shared.db.begin_write_unflushed().await?;
            let mut also = Batch::new();
            // Changes nothing only if reconciliation kept the claim
            // meanwhile: either way the answer stands and was sent once.
            repo::finalize_steps(&mut also, self.shared.db.backend(), pending_id, now, ours);
            sessions::transition_step(
                &mut also,
                session_id,
                &[SessionState::WaitingForInput],
                SessionState::Running,
                now,
            );
            let (started, _) = self
                .shared
                .start_turn_with(&mut tx, session_id, now, also)
                .await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(started)
        }
        .await;
        match settled {
            Ok(started) => {
                if let Err(error) = self.shared.turn_started(&started).await {
                    tracing::warn!(pending_id, %error, "resumed, but browsers were not told of the new turn");
                }
            }
            Err(error) => {
                tracing::warn!(pending_id, %error, "resumed, but the successor turn and the final mark were not written; the sweep will finalize");
            }
        }
        Ok(Handed::Resumed)
    }

    /// Where the session's agent is resumed, if it says (a target that no
    /// longer parses is none).
    pub(super) async fn resume_target(&self, session_id: &str) -> Result<Option<ResumeTarget>> {
        let session = sessions::get(self.shared.db.pool(), session_id).await?;
        Ok(session.and_then(|s| serde_json::from_str(&s.resume_target).ok()))
    }

    /// Reopens a bundle whose delivery failed, if the claim is still this
    /// delivery's; if even that fails, the sweep will (R6).
    async fn take_back(&self, pending_id: &str, token: i64) {
        let restored = repo::restore(
            &self.shared.db,
            pending_id,
            now_micros(),
            Guard::Claim(token),
        )
        .await;
        if let Err(error) = restored {
            tracing::error!(pending_id, %error, "could not reopen the question; the sweep will");
        }
    }

    /// Restores after a refused dispatch, trying again briefly: a claim
    /// left marked as attempted would be kept by the sweep.
    async fn restore_refused(&self, pending_id: &str, guard: Guard) {
        for attempt in 0..RESTORE_TRIES {
            match repo::restore(&self.shared.db, pending_id, now_micros(), guard).await {
                Ok(_) => return,
                Err(error) => {
                    tracing::error!(pending_id, %error, attempt, "could not reopen the question after a refused resume");
                    tokio::time::sleep(std::time::Duration::from_millis(200 << attempt)).await;
                }
            }
        }
    }
}

/// A won claim, to be delivered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Won<'a> {
    /// The bundle as it was before the claim.
    pub bundle: &'a Bundle,
    /// Its questions, in D2 order.
    pub questions: &'a [clarify_core::Question],
    /// What was answered.
    pub outcome: &'a Outcome,
    /// The R12 envelope of it.
    pub response: &'a Response,
    /// The claim's token: every write of the delivery is fenced by it.
    pub token: i64,
    /// The claimed rows say the agent stopped waiting: the bundle as read
    /// before the claim may not know it yet.
    pub detached: bool,
    /// The claimed rows say the agent polls it as an MCP task.
    pub polled: bool,
    /// The claim itself marked the resume to this target attempted
    /// ([`crate::db::clarification::Delivery::Resume`]).
    pub marked: Option<&'a ResumeTarget>,
}

/// How a won claim was handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handed {
    /// To the attached agent, which was woken with it.
    Live,
    /// Stored final (a rejection), or kept for the agent to collect.
    Stored,
    /// Sent through the resume target; the session moved on with it.
    Resumed,
    /// Nobody took it: it must be rolled back (R7a).
    Refused,
}
