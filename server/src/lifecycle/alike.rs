//! One answer for bundles that ask the same thing (issue 29 item 5): ten
//! agents of one migration asking "Postgres or SQLite?" answered at once,
//! each bundle through its own claim.

use clarify_core::alike::alike;
use clarify_core::api::AlikeOutcome;
use clarify_core::approval::bundle_tool_call;
use clarify_core::stored::bundle_questions;
use clarify_core::{AnsweredBy, Outcome, PendingId, Question, Submission, validate_submission};
use futures_util::future::join_all;

use super::{Error, Resolving, Result, Via};
use crate::auth::Caller;
use crate::db::clarification::Bundle;

/// The most bundles one answer may settle: more than a person groups in a
/// sitting, few enough that the request stays short.
pub const MAX_ALIKE: usize = 50;

/// Bundles of one answer settled at once.
const SETTLING_AT_ONCE: usize = 4;

impl Resolving {
    /// Answers every bundle of `pending_ids` with `submission`. Nothing is
    /// claimed unless every bundle is the caller's to answer, alike the
    /// first, and the answer valid for them; then each is settled on its
    /// own (P1), so one already settled elsewhere keeps its winner and
    /// the caller is told it (R2), one closed unanswered says so, and one
    /// that could not be delivered says why while the others go on.
    ///
    /// # Errors
    /// 400 an empty, too long or repeating list, bundles not alike, or an
    /// answer that does not fit them; 403 an agent's own question; 404 a
    /// bundle unknown or foreign.
    pub async fn resolve_alike(
        &self,
        caller: &Caller,
        via: &Via,
        pending_ids: &[PendingId],
        submission: &Submission,
    ) -> Result<Vec<AlikeOutcome>> {
        if pending_ids.is_empty() || pending_ids.len() > MAX_ALIKE {
            return Err(Error::Invalid(format!(
                "pending_ids: 1 to {MAX_ALIKE} bundles"
            )));
        }
        if matches!(caller, Caller::Agent(agent) if agent.scoped) {
            return Err(Error::Forbidden("an agent cannot answer its own question"));
        }
        let mut bundles = Vec::with_capacity(pending_ids.len());
        for (i, id) in pending_ids.iter().enumerate() {
            if pending_ids[..i].contains(id) {
                return Err(Error::Invalid(format!(
                    "pending_ids[{i}]: {id} is listed twice"
                )));
            }
            bundles.push(self.shared.authorized_bundle(caller, id.as_str()).await?);
        }
        let questions: Vec<_> = bundles
            .iter()
            .map(|b| bundle_questions(&b.messages))
            .collect();
        // An approval's call is part of what it asks (issue 47): one answer
        // never allows two different calls.
        let call = |i: usize| bundle_tool_call(&bundles[i].messages);
        if let Some(i) = (1..questions.len())
            .find(|&i| !alike(&questions[0], &questions[i]) || call(i) != call(0))
        {
            return Err(Error::Invalid(format!(
                "pending_ids[{i}]: does not ask the same questions as pending_ids[0]"
            )));
        }
        let outcome = validate_submission(&questions[0], submission)
            .map_err(|e| Error::Invalid(format!("response: {e}")))?;
        let mut by = self.answered_by(caller, via).await?;
        // Provenance says how many others the one answer went to.
        by.alike = u32::try_from(pending_ids.len() - 1).unwrap_or(u32::MAX);
        // A few at a time: each may wait on its agent's resume (a webhook
        // up to its timeout), and fifty in a row would hold the request
        // for minutes.
        let pairs: Vec<_> = bundles.iter().zip(&questions).collect();
        let mut outcomes = Vec::with_capacity(pairs.len());
        for chunk in pairs.chunks(SETTLING_AT_ONCE) {
            let mut settling = Vec::with_capacity(chunk.len());
            for &(bundle, questions) in chunk {
                settling.push(self.settle_alike(bundle, questions, &outcome, &by));
            }
            outcomes.extend(join_all(settling).await);
        }
        Ok(outcomes)
    }

    /// One bundle of [`Self::resolve_alike`] through its own claim, its
    /// failure said in its outcome.
    async fn settle_alike(
        &self,
        bundle: &Bundle,
        questions: &[Question],
        outcome: &Outcome,
        by: &AnsweredBy,
    ) -> AlikeOutcome {
        let pending_id = bundle.pending_id().to_owned();
        match self.settle(bundle, questions, outcome, by).await {
            Ok(body) => AlikeOutcome {
                pending_id,
                claimed: body.claimed,
                status: Some(body.status),
                response: Some(body.response),
                error: String::new(),
            },
            Err(e) => {
                if let Error::Database(cause) = &e {
                    tracing::error!(error = %cause, "respond-alike: a claim failed");
                }
                // Closed unanswered says nothing more (409 on its own);
                // anything else is said, and the others go on.
                let error = match e {
                    Error::Conflict(_) => String::new(),
                    e => e.to_string(),
                };
                AlikeOutcome {
                    pending_id,
                    claimed: false,
                    status: None,
                    response: None,
                    error,
                }
            }
        }
    }
}
