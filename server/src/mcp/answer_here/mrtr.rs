//! The 2026-07-28 era of `answer_with_me_kandev` (MRTR, SEP-2322): a
//! round of forms returned as `input_required`, and the retry that brings
//! them back filled in, with the sealed `requestState` saying what was asked.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitResult, ElicitationAction, InputRequest,
    InputRequiredResult, InputResponses,
};

use super::report::{Line, Outcome, Report};
use super::state::Round;
use super::{Call, MAX_TRIES, Shown, form};
use crate::lifecycle::Error;

impl Call<'_> {
    /// The 2026-07-28 era: a round of forms, one per bundle, sealed with
    /// what the retry needs.
    pub(super) fn ask_round(
        &self,
        shown: &[Shown],
        round: &Round,
        problems: &BTreeMap<String, String>,
    ) -> InputRequiredResult {
        let mut requests = BTreeMap::new();
        for (i, s) in shown.iter().enumerate() {
            let problem = problems.get(&s.bundle.pending_id).map(String::as_str);
            let form = form::request(&s.bundle, &s.task, problem);
            requests.insert(
                format!("b{i}"),
                InputRequest::Elicitation(ElicitRequest::new(form)),
            );
        }
        let sealed = round.seal(&self.state.seal_key, &self.principal());
        InputRequiredResult::new(Some(requests), Some(sealed))
    }

    /// The 2026-07-28 era's retry: the forms of `round` filled in.
    pub(super) async fn retried(
        &self,
        round: Round,
        mut responses: InputResponses,
    ) -> Result<CallToolResponse, McpError> {
        let mut results = round.done;
        let mut again = Vec::new();
        let mut problems = BTreeMap::new();
        let mut titles = BTreeMap::new();
        for (i, pending_id) in round.asked.into_iter().enumerate() {
            let read = self
                .state
                .lifecycle
                .reading
                .read(self.caller, &pending_id.as_str().into())
                .await;
            let view = match read {
                Ok(view) => view,
                // Said on its line: the others, and what was sent before,
                // are still told.
                Err(e) => {
                    if let Error::Database(cause) = &e {
                        tracing::error!(error = %cause, "answer_with_me: a bundle could not be read");
                    }
                    results.push(Line::unread(pending_id, e.to_string()));
                    continue;
                }
            };
            let task = self.title(&mut titles, &view.bundle.task_id).await;
            let s = Shown {
                bundle: view.bundle.clone(),
                task,
            };
            let result = responses
                .remove(&format!("b{i}"))
                .and_then(|r| serde_json::from_value::<ElicitResult>(r).ok())
                .filter(|r| r.action == ElicitationAction::Accept);
            let Some(result) = result else {
                results.push(if view.active {
                    Line::new(&s.bundle, &s.task, Outcome::Skipped, String::new())
                } else {
                    Line::settled(view, &s.task)
                });
                continue;
            };
            // Filled in: the claim itself says whether this answer won, lost
            // to one sent meanwhile (told the winner's), or came too late.
            match self.take(&s, result).await {
                Ok(line) => results.push(line),
                Err(why) if round.tries + 1 < MAX_TRIES => {
                    problems.insert(pending_id, why);
                    again.push(s);
                }
                Err(why) => results.push(Line::new(&s.bundle, &s.task, Outcome::NotSent, why)),
            }
        }
        if !again.is_empty() {
            let next = Round::new(&again, round.tries + 1, results, round.more);
            return Ok(self.ask_round(&again, &next, &problems).into());
        }
        Ok(Report {
            results,
            more_waiting: round.more,
        }
        .into_result("Done:")
        .into())
    }
}
