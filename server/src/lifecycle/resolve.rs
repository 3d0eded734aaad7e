//! ResolveBundle: authorize, validate, claim (P1), tell a loser the winner
//! (R2), and deliver for the winner only (R7): live to an attached agent,
//! through the resume target, or rolled back (R7a).

use clarify_core::stored::bundle_questions;
use clarify_core::{
    Outcome, RespondBody, Response, SessionState, Submission, agent_text, validate_submission,
    winner,
};

use super::resume::{ResumePayload, ResumeTarget};
use super::{Error, Lifecycle, Result};
use crate::auth::Caller;
use crate::clock::{self, now_micros};
use crate::db::clarification::{self as repo, Bundle, Guard};
use crate::db::sessions;
use crate::waiters::Wake;

impl Lifecycle {
    /// ResolveBundle: authorize, validate (N6–N8b, L16), claim (P1), tell a
    /// loser the winner (R2), and deliver for the winner only (R7).
    ///
    /// # Errors
    /// 404 unknown or foreign, 400 invalid, 409 inactive with no winner, 500
    /// on a claim error (R4a) or a failed delivery (R7a, rolled back).
    pub async fn resolve(
        &self,
        caller: &Caller,
        pending_id: &str,
        submission: &Submission,
    ) -> Result<RespondBody> {
        let bundle = self.authorized_bundle(caller, pending_id).await?;
        if matches!(caller, Caller::Agent { .. }) {
            return Err(Error::Forbidden("an agent cannot answer its own question"));
        }
        let questions = bundle_questions(&bundle.messages);
        let outcome = validate_submission(&questions, submission)
            .map_err(|e| Error::Invalid(e.to_string()))?;

        let now = now_micros();
        let claimed = match repo::complete_active_bundle(&self.db, pending_id, &outcome, now).await
        {
            Ok(claimed) => claimed,
            Err(error) => {
                // R4a: logged with the pending_id, answered 500, not retried.
                tracing::error!(pending_id, %error, "clarification claim failed");
                return Err(Error::from(error));
            }
        };
        let Some(claim) = claimed else {
            return self.loser(pending_id).await;
        };

        let response = outcome.to_response(pending_id, &clock::rfc3339(now));
        self.deliver(&bundle, &questions, &outcome, &response, claim.token)
            .await?;
        Ok(RespondBody::new(true, outcome.status(), response))
    }

    /// R2: one re-read, no retry (R2a). A winner → 200 `claimed: false` with
    /// its reconstructed response (R2b); none → 409.
    async fn loser(&self, pending_id: &str) -> Result<RespondBody> {
        let reread = repo::load(self.db.pool(), pending_id).await?;
        let won = reread
            .as_ref()
            .and_then(|b| winner(&b.messages).map(|w| (w, b.updated_at())));
        match won {
            Some((w, at)) => Ok(RespondBody::new(
                false,
                w.status,
                w.to_response(pending_id, &clock::rfc3339(at)),
            )),
            None => Err(Error::Conflict("clarification request is no longer active")),
        }
    }

    /// R7: a live waiter gets the answer in its turn; otherwise a detached
    /// answer resumes the agent through its session's target and a detached
    /// rejection is stored without resuming (R9). Anything not accepted is
    /// rolled back (restore) and reported (R7a). Every write is guarded by
    /// the claim's `token`: a claim reconciliation took back reaches no one.
    async fn deliver(
        &self,
        bundle: &Bundle,
        questions: &[clarify_core::Question],
        outcome: &Outcome,
        response: &Response,
        token: i64,
    ) -> Result<()> {
        let pending_id = response.pending_id.as_str();
        let session_id = bundle.session_id();
        let detached = bundle
            .messages
            .iter()
            .any(|m| m.metadata.agent_disconnected);
        let now = now_micros();
        let ours = Guard::Claim(token);

        let attached = !detached
            && self.is_attached(pending_id).await.unwrap_or_else(|error| {
                // The claim is made: deliver it some other way rather than
                // strand it.
                tracing::warn!(pending_id, %error, "could not tell whether the agent waits");
                false
            });
        let delivered = if attached {
            // Final before the wake: a waiter that reads the claim still in
            // delivery sleeps until the wake, and a claim taken back is
            // never handed over. Staged before the final write: a waiter
            // that reads the final rows before the wake still gets the live
            // response, reason included (R9).
            self.wake(pending_id, &Wake::Staged(response.clone()));
            let delivered = repo::finalize(&self.db, pending_id, now, ours).await?;
            let wake = if delivered {
                Wake::Resolved(response.clone())
            } else {
                Wake::Nothing
            };
            self.wake(pending_id, &wake);
            delivered
        } else if matches!(outcome, Outcome::Rejected { .. }) {
            repo::finalize(&self.db, pending_id, now, ours).await?
        } else {
            self.resume(bundle, questions, outcome, response, token)
                .await?
        };

        if !delivered {
            repo::restore(&self.db, pending_id, now_micros(), ours).await?;
            return Err(Error::Undelivered);
        }
        if !attached {
            // Observers (readers who are not the agent) learn the outcome too.
            self.wake(pending_id, &Wake::Resolved(response.clone()));
        }
        sessions::transition(
            self.db.pool(),
            session_id,
            &[SessionState::WaitingForInput],
            SessionState::Running,
            now,
        )
        .await?;
        self.publish_bundle(pending_id).await?;
        self.publish_session(session_id, bundle.task_id()).await;
        Ok(())
    }

    /// Resumes a detached agent with the answer claimed under `token`;
    /// finalizes on success and restores on a refused dispatch.
    async fn resume(
        &self,
        bundle: &Bundle,
        questions: &[clarify_core::Question],
        outcome: &Outcome,
        response: &Response,
        token: i64,
    ) -> Result<bool> {
        let pending_id = response.pending_id.as_str();
        let session_id = bundle.session_id();
        let Some(session) = sessions::get(self.db.pool(), session_id).await? else {
            return Ok(false);
        };
        let Ok(target) = serde_json::from_str::<ResumeTarget>(&session.resume_target) else {
            tracing::warn!(
                pending_id,
                "detached answer but the session has no resume target"
            );
            return Ok(false);
        };
        let prompt = agent_text::resume_prompt(questions, outcome);
        let payload = ResumePayload {
            session_id,
            task_id: bundle.task_id(),
            pending_id,
            prompt: &prompt,
            response,
        };
        let marked_at = now_micros();
        if !repo::mark_resume_attempted(&self.db, pending_id, marked_at, token).await? {
            // No longer ours to deliver: reconciliation took the claim back
            // (this replica looked dead), so nothing may reach the agent.
            tracing::warn!(pending_id, "claim reconciled before its resume");
            return Ok(false);
        }
        let ours = Guard::Claim(marked_at);
        if !self.resumer.dispatch(&target, &payload).await {
            repo::restore(&self.db, pending_id, now_micros(), ours).await?;
            return Ok(false);
        }
        // The agent continues in a successor turn, created only now that the
        // dispatch was accepted.
        let now = now_micros();
        self.start_turn(session_id, now).await?;
        // `false` only if reconciliation kept the claim meanwhile: either way
        // the answer stands and was sent once.
        repo::finalize(&self.db, pending_id, now, ours).await?;
        Ok(true)
    }
}
