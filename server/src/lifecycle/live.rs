//! ResolveBundle's fast path, for an answer to an agent blocked on the
//! bundle: the claim (P1), its delivery and the session's return to
//! RUNNING are one transaction, and the agent is woken as it commits
//! (issue 17: the claim, a finalize and a transition were three).

use clarify_core::{AnsweredBy, EventKind, Outcome, RespondBody, Response, SessionState};

use super::{Lifecycle, Result};
use crate::db::batch::Batch;
use crate::db::clarification::{self as repo, Bundle, Claiming, Delivery};
use crate::db::sessions;
use crate::waiters::Wake;

impl Lifecycle {
    /// Whether the asking agent is blocked on `bundle` (and has not
    /// detached from it): then its answer is handed over live.
    pub(super) async fn agent_blocked(&self, bundle: &Bundle, pending_id: &str) -> bool {
        let detached = bundle.detached();
        !detached
            && self.is_attached(pending_id).await.unwrap_or_else(|error| {
                // The other path asks again after its claim.
                tracing::warn!(pending_id, %error, "could not tell whether the agent waits");
                false
            })
    }

    /// Claims `bundle` with `outcome` and hands `response` to the blocked
    /// agent, in one transaction; a loser is told the winner (R2).
    ///
    /// # Errors
    /// Database errors (logged with the pending_id, R4a): nothing was
    /// claimed, the bundle is answerable as before.
    pub(super) async fn resolve_live(
        &self,
        bundle: &Bundle,
        outcome: &Outcome,
        by: &AnsweredBy,
        response: Response,
        now: i64,
    ) -> Result<RespondBody> {
        let pending_id = response.pending_id.as_str();
        let claimed = async {
            let mut tx = self.db.begin_write().await?;
            // The session moves back to RUNNING with the claim's own
            // writes, in one trip (issue 17).
            let mut also = Batch::new();
            sessions::transition_step(
                &mut also,
                bundle.session_id(),
                &[SessionState::WaitingForInput],
                SessionState::Running,
                now,
            );
            let claiming = Claiming {
                outcome,
                by,
                now,
                delivery: Delivery::Final,
            };
            let claim = repo::claim_in(&mut tx, &self.db, pending_id, claiming, also).await?;
            let Some(claim) = claim else {
                tx.rollback().await?;
                return Ok(None);
            };
            Ok::<_, sqlx::Error>(Some((tx, claim)))
        }
        .await;
        let (tx, claim) = match claimed {
            Ok(Some(claimed)) => claimed,
            Ok(None) => return self.loser(pending_id, by).await,
            Err(error) => {
                tracing::error!(pending_id, %error, "clarification claim failed");
                return Err(error.into());
            }
        };
        // Staged before the commit: a waiter that reads the final rows
        // before the Resolved wake still gets the live response, reason
        // included (R9). Only the winner gets here: the claim holds the
        // write lock (SQLite) or the rows' locks (PostgreSQL) until then.
        self.wake(pending_id, &Wake::Staged(response.clone()));
        if let Err(error) = tx.commit().await {
            self.wake(pending_id, &Wake::Nothing);
            tracing::error!(pending_id, %error, "clarification claim failed");
            return Err(error.into());
        }
        self.wake(pending_id, &Wake::Resolved(response.clone()));
        // The rows as the claim wrote them: no read to announce them.
        let published = self
            .publish_messages(EventKind::MessageUpdated, bundle.session_id(), &claim.rows)
            .await;
        if let Err(error) = published {
            tracing::warn!(pending_id, %error, "delivered, but browsers were not told");
        }
        self.publish_session(bundle.session_id(), bundle.task_id())
            .await;
        Ok(RespondBody::new(true, outcome.status(), response))
    }
}
