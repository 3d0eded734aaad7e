//! ResolveBundle's fast path, for an answer to an agent blocked on the
//! bundle: the claim (P1), its delivery and the session's return to
//! RUNNING are one transaction, and the agent is woken as it commits
//! (issue 17: the claim, a finalize and a transition were three).

use clarify_core::{AnsweredBy, EventKind, Outcome, RespondBody, Response, SessionState};

use super::{Resolving, Result};
use crate::db::batch::Batch;
use crate::db::clarification::{self as repo, Bundle, Claiming, Delivery};
use crate::db::sessions;
use crate::waiters::Wake;

impl Resolving {
    /// Whether the asking agent is blocked on `bundle` (and has not
    /// detached from it): then its answer is handed over live. When that
    /// cannot be told, no: the answer then goes by resume or pickup, never
    /// stranded.
    pub(super) async fn agent_blocked(&self, bundle: &Bundle) -> bool {
        let pending_id = bundle.pending_id();
        !bundle.detached()
            && self
                .shared
                .is_attached(pending_id)
                .await
                .unwrap_or_else(|error| {
                    tracing::warn!(pending_id, %error, "could not tell whether the agent waits");
                    false
                })
    }

    /// The one live hand-over, around the write that makes the answer
    /// final (`write`: the claim's commit, or a finalize after it): the
    /// response is staged before it, so a waiter that reads the final rows
    /// before the wake still gets the live response, reason included (R9);
    /// the agent is woken with it once the write says it is final, and
    /// told nothing if it is not (a claim taken back is never handed over).
    pub(super) async fn hand_live(
        &self,
        response: &Response,
        write: impl std::future::Future<Output = sqlx::Result<bool>>,
    ) -> sqlx::Result<bool> {
        let pending_id = response.pending_id.as_str();
        self.shared
            .wake(pending_id, &Wake::Staged(response.clone()));
        let written = write.await;
        let wake = match written {
            Ok(true) => Wake::Resolved(response.clone()),
            Ok(false) | Err(_) => Wake::Nothing,
        };
        self.shared.wake(pending_id, &wake);
        written
    }

    /// Claims `bundle` with `outcome` and hands `response` to the blocked
    /// agent, in one transaction; a loser is told the winner (R2). When
    /// the claimed rows say the agent no longer blocks on it (read under
    /// the claim's lock: it stopped waiting since `bundle` was read, or
    /// polls it as a task), the claim is committed with its delivery still
    /// to come, for the caller to deliver.
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
    ) -> Result<Live> {
        let pending_id = response.pending_id.as_str();
        let claimed = async {
            let mut tx = self.shared.db.begin_write().await?;
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
                read: bundle,
            };
            let claim =
                repo::claim_in(&mut tx, &self.shared.db, pending_id, claiming, also).await?;
            let Some(claim) = claim else {
                tx.rollback().await?;
                return Ok(Claimed::Lost);
            };
            if claim.delivery == Delivery::Pending {
                tx.commit().await?;
                return Ok(Claimed::NotLive(claim));
            }
            Ok::<_, sqlx::Error>(Claimed::Won(tx, claim))
        }
        .await;
        let (tx, claim) = match claimed {
            Ok(Claimed::Won(tx, claim)) => (tx, claim),
            Ok(Claimed::Lost) => return self.loser(pending_id, by).await.map(Live::Done),
            Ok(Claimed::NotLive(claim)) => return Ok(Live::Claimed(claim)),
            Err(error) => {
                tracing::error!(pending_id, %error, "clarification claim failed");
                return Err(error.into());
            }
        };
        // Only the winner gets here: the claim holds the write lock
        // (SQLite) or the rows' locks (PostgreSQL) until the commit.
        let committed = self.hand_live(&response, async { tx.commit().await.map(|()| true) });
        if let Err(error) = committed.await {
            tracing::error!(pending_id, %error, "clarification claim failed");
            return Err(error.into());
        }
        // The rows as the claim wrote them: no read to announce them.
        let published = self
            .shared
            .publish_messages(EventKind::MessageUpdated, bundle.session_id(), &claim.rows)
            .await;
        if let Err(error) = published {
            tracing::warn!(pending_id, %error, "delivered, but browsers were not told");
        }
        self.shared
            .publish_session(bundle.session_id(), bundle.task_id())
            .await;
        Ok(Live::Done(RespondBody::new(
            true,
            outcome.status(),
            response,
        )))
    }
}

/// How a live hand-over ended.
pub(super) enum Live {
    /// Answered (handed over), or lost to the winner (told).
    Done(RespondBody),
    /// Claimed, but the agent no longer blocks on it: delivery to come.
    Claimed(repo::Claim),
}

/// How a live claim's transaction ended.
enum Claimed {
    /// Won: the transaction, still open, and the claim.
    Won(crate::db::Tx, repo::Claim),
    /// Someone else's claim came first.
    Lost,
    /// Claimed and committed, but not live: the agent no longer blocks.
    NotLive(repo::Claim),
}
