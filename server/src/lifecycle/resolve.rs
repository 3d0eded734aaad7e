//! ResolveBundle: authorize, validate, claim (P1), tell a loser the winner
//! (R2); the winner's delivery is [`super::deliver`]'s.

use clarify_core::Channel;
use clarify_core::PendingId;
use clarify_core::stored::bundle_questions;
use clarify_core::{AnsweredBy, Outcome, Question, RespondBody, Submission, validate_submission};

use super::deliver::Won;
use super::live::Live;
use super::provenance::{Lost, Via};
use super::{Error, Resolving, Result};
use crate::auth::Caller;
use crate::clock::{self, now_micros};
use crate::db::clarification::{self as repo, Bundle, Claiming, Delivery};

impl Resolving {
    /// ResolveBundle: authorize, validate (N6–N8b, L16), claim (P1), tell a
    /// loser the winner (R2), and deliver for the winner only (R7).
    ///
    /// # Errors
    /// 404 unknown or foreign, 400 invalid, 409 inactive with no winner, 500
    /// on a claim error (R4a) or a failed delivery (R7a, rolled back).
    pub async fn resolve(
        &self,
        caller: &Caller,
        via: &Via,
        pending_id: &PendingId,
        submission: &Submission,
    ) -> Result<RespondBody> {
        let pending_id = pending_id.as_str();
        let bundle = self.shared.authorized_bundle(caller, pending_id).await?;
        if via.channel == Channel::Terminal {
            // What the person chose in the agent's own dialog (issue 47):
            // only the asking agent saw that dialog, so only its session
            // reports it.
            let asking = caller.agent().map(|a| a.session_id.as_str());
            if asking != Some(bundle.session_id()) {
                return Err(Error::Forbidden(
                    "only the asking agent's session reports an answer given at its terminal",
                ));
            }
        } else if matches!(caller, Caller::Agent(agent) if agent.scoped) {
            return Err(Error::Forbidden("an agent cannot answer its own question"));
        }
        let questions = bundle_questions(&bundle.messages);
        let outcome = validate_submission(&questions, submission)
            .map_err(|e| Error::Invalid(e.to_string()))?;

        let by = self.answered_by(caller, via).await?;
        self.settle(&bundle, &questions, &outcome, &by).await
    }

    /// The one claim every channel goes through, once `by` is known to
    /// hold the right to answer `bundle` with `outcome`: live hand-over to
    /// a blocked agent, else the claim (P1) and delivery for the winner
    /// (R7), else the winner told to the loser (R2).
    pub(super) async fn settle(
        &self,
        bundle: &Bundle,
        questions: &[Question],
        outcome: &Outcome,
        by: &AnsweredBy,
    ) -> Result<RespondBody> {
        let started = std::time::Instant::now();
        let body = self
            .claim_and_deliver(bundle, questions, outcome, by)
            .await?;
        if body.claimed {
            let measure = &self.shared.measure;
            measure.observe("clarify_claim_seconds", &[], started.elapsed());
            let (what, waited) = match outcome {
                Outcome::Rejected { .. } => ("declined", true),
                // Defaults chosen at expiry: nobody answered it.
                Outcome::Answered(_) if by.channel == Channel::Expiry.as_str() => {
                    ("defaulted", false)
                }
                Outcome::Answered(_) => ("answered", true),
            };
            let asked = now_micros().saturating_sub(bundle.created_at());
            let waited =
                waited.then(|| std::time::Duration::from_micros(asked.max(0).unsigned_abs()));
            let kind = crate::measure::Measure::kind_of(&bundle.messages);
            measure.settled(what, &by.channel, kind, waited);
        }
        Ok(body)
    }

    async fn claim_and_deliver(
        &self,
        bundle: &Bundle,
        questions: &[Question],
        outcome: &Outcome,
        by: &AnsweredBy,
    ) -> Result<RespondBody> {
        let pending_id = bundle.pending_id();
        let now = now_micros();
        let mut target = None;
        let claim = if self.agent_blocked(bundle).await {
            let response = outcome.to_response(pending_id, &clock::rfc3339(now));
            match self
                .resolve_live(bundle, outcome, by, response, now)
                .await?
            {
                Live::Done(body) => return Ok(body),
                // The claim's rows say the agent stopped waiting after
                // `bundle` was read (a cancelled call or task, A5a), or
                // polls a task: claimed, delivery still to come.
                Live::Claimed(claim) => claim,
            }
        } else {
            // Read before the claim, so the claim itself marks the resume
            // attempted when there is one to make (R6): one transaction
            // fewer before the dispatch (issue 31). R9: a decline is never
            // resumed.
            target = match outcome {
                Outcome::Rejected { .. } => None,
                Outcome::Answered(_) => self.resume_target(bundle.session_id()).await?,
            };
            let claiming = Claiming {
                outcome,
                by,
                now,
                delivery: if target.is_some() {
                    Delivery::Resume
                } else {
                    Delivery::Pending
                },
                read: bundle,
            };
            let claimed =
                match repo::complete_active_bundle(&self.shared.db, pending_id, claiming).await {
                    Ok(claimed) => claimed,
                    Err(error) => {
                        // R4a: logged with the pending_id, answered 500, not retried.
                        tracing::error!(pending_id, %error, "clarification claim failed");
                        return Err(Error::from(error));
                    }
                };
            let Some(claim) = claimed else {
                return self.loser(pending_id, by).await;
            };
            claim
        };

        let response = outcome.to_response(pending_id, &clock::rfc3339(now));
        let won = Won {
            bundle,
            questions,
            outcome,
            response: &response,
            token: claim.token,
            detached: claim.detached,
            polled: claim.polled,
            marked: target
                .as_ref()
                .filter(|_| claim.delivery == Delivery::Resume),
        };
        self.deliver(&won).await?;
        Ok(RespondBody::new(true, outcome.status(), response))
    }

    /// R2: one re-read, no retry (R2a). A winner → 200 `claimed: false` with
    /// its reconstructed response (R2b); none → 409. Either way the attempt
    /// is logged, with who made it.
    pub(super) async fn loser(&self, pending_id: &str, by: &AnsweredBy) -> Result<RespondBody> {
        let reread = repo::load(self.shared.db.pool(), pending_id).await?;
        let won = reread
            .as_ref()
            .and_then(|b| b.winner().map(|w| (w, b.updated_at())));
        match won {
            Some((w, at)) => {
                self.log_attempt(pending_id, by, Lost::ToWinner).await;
                Ok(RespondBody::new(
                    false,
                    w.status,
                    w.to_response(pending_id, &clock::rfc3339(at)),
                ))
            }
            None => {
                self.log_attempt(pending_id, by, Lost::Inactive).await;
                Err(Error::Conflict("clarification request is no longer active"))
            }
        }
    }
}
