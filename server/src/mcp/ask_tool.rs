//! `ask_user_question_kandev` as an agent sees it: its arguments, its
//! result and its description, shared by the HTTP agent surface
//! (`/mcp/agent`) and the stdio server (`clarify mcp`) so that the two can
//! never offer an agent different tools.

use std::collections::BTreeMap;

use clarify_core::{NewBundle, NewOption, NewQuestion, Outcome, Question, RespondBody, agent_text};
use schemars::JsonSchema;

use crate::lifecycle::{Error, WaitOutcome};
use serde::{Deserialize, Serialize};

/// The tool's description.
pub const DESCRIPTION: &str = "Ask the user 1 to 4 questions (each with 2 to 6 options; the user may also answer in free text) when you need a decision only a human can make. Blocks until the user answers, and returns the answers keyed by question id (q1, q2, …), or rejected: true if they declined.";

/// One option of a question.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OptionArg {
    /// What the option says.
    pub label: String,
    /// A longer explanation.
    pub description: String,
}

/// One question.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct QuestionArg {
    /// A short heading.
    pub title: String,
    /// The question itself.
    pub prompt: String,
    /// 2 to 6 choices; the human may also answer in free text.
    pub options: Vec<OptionArg>,
    /// Let the human choose several options together (checkboxes).
    pub multi_select: bool,
    /// The option chosen for you if the question expires unanswered (its
    /// id, `q1_opt2` for the second option of the first question); used
    /// only when every question has one.
    pub default_option_id: String,
}

/// Arguments of `ask_user_question_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
pub struct AskArgs {
    /// 1 to 4 questions, shown together.
    pub questions: Vec<QuestionArg>,
    /// Context shown once above the questions.
    pub context: String,
    /// The same context as paragraphs (instead of `context`).
    pub context_paragraphs: Vec<String>,
    /// Seconds until the question expires unanswered; then you are told
    /// so, and decide yourself or ask again. 0 or absent: the server's
    /// default (by default, never).
    #[schemars(schema_with = "super::args::expiry_schema")]
    pub expires_in_seconds: u64,
    /// The person this is for (their user name): first in their inbox,
    /// named in the notices. Anyone who may see it may still answer.
    pub assignee: String,
}

impl AskArgs {
    /// The bundle asked, and its expiry in seconds (`None`: the server's
    /// default).
    #[must_use]
    pub fn into_bundle(self) -> (NewBundle, Option<u64>) {
        let bundle = NewBundle {
            questions: self
                .questions
                .into_iter()
                .map(|q| NewQuestion {
                    title: q.title,
                    prompt: q.prompt,
                    options: q
                        .options
                        .into_iter()
                        .map(|o| NewOption {
                            label: o.label,
                            description: o.description,
                            ..NewOption::default()
                        })
                        .collect(),
                    multi_select: q.multi_select,
                    default_option_id: q.default_option_id,
                    ..NewQuestion::default()
                })
                .collect(),
            context: self.context,
            context_paragraphs: self.context_paragraphs,
            assignee: self.assignee,
            ..NewBundle::default()
        };
        let seconds = self.expires_in_seconds;
        (bundle, (seconds != 0).then_some(seconds))
    }
}

/// One question's answer, as the agent receives it.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerOut {
    /// The chosen option ids.
    pub selected_options: Vec<String>,
    /// Their labels, in the same order.
    pub selected_labels: Vec<String>,
    /// Free text, `""` when none.
    pub custom_text: String,
}

/// What the agent receives.
#[derive(Debug, Clone, Serialize)]
pub struct AskOut {
    /// The bundle asked.
    pub pending_id: String,
    /// Answers keyed by question id (`q1`, …); empty when declined.
    pub answers: BTreeMap<String, AnswerOut>,
    /// Whether the human declined to answer.
    pub rejected: bool,
    /// Why, `""` when not given.
    pub reject_reason: String,
    /// Nobody answered in time: the question expired.
    pub expired: bool,
    /// The same outcome in words.
    pub summary: String,
}

impl AskOut {
    /// The answer (or the decline) in `body`, to the `questions` asked.
    #[must_use]
    pub fn answered(pending_id: &str, questions: &[Question], body: &RespondBody) -> Self {
        let response = &body.response;
        let answers = response
            .answers
            .iter()
            .map(|a| {
                let question = questions.iter().find(|q| q.question_id == a.question_id);
                let labels = a
                    .selected_options
                    .iter()
                    .map(|id| {
                        question
                            .and_then(|q| q.option_label(id))
                            .unwrap_or(id)
                            .to_owned()
                    })
                    .collect();
                (
                    a.question_id.clone(),
                    AnswerOut {
                        selected_options: a.selected_options.clone(),
                        selected_labels: labels,
                        custom_text: a.custom_text.clone(),
                    },
                )
            })
            .collect();
        let outcome = if response.rejected {
            Outcome::Rejected {
                reason: response.reject_reason.clone(),
            }
        } else {
            Outcome::Answered(response.answers.clone())
        };
        Self {
            pending_id: pending_id.to_owned(),
            answers,
            rejected: response.rejected,
            reject_reason: response.reject_reason.clone(),
            expired: false,
            summary: agent_text::answer_summary(questions, &outcome),
        }
    }

    /// Nobody answered before the bundle expired.
    #[must_use]
    pub fn expired(pending_id: &str) -> Self {
        Self {
            pending_id: pending_id.to_owned(),
            answers: BTreeMap::new(),
            rejected: false,
            reject_reason: String::new(),
            expired: true,
            summary: agent_text::EXPIRED.to_owned(),
        }
    }
}

/// What the agent is told when its question was closed unanswered.
pub const CLOSED: &str = "the question was closed before anyone answered it";

/// What the call returns for a wait that ended, the one mapping the
/// blocking call and a completed MCP task share; `None` while it waits.
pub fn outcome_result(
    pending_id: &str,
    questions: &[Question],
    outcome: &WaitOutcome,
) -> Option<Result<AskOut, Error>> {
    match outcome {
        WaitOutcome::Resolved(body) => Some(Ok(AskOut::answered(pending_id, questions, body))),
        WaitOutcome::Expired(_) => Some(Ok(AskOut::expired(pending_id))),
        WaitOutcome::Closed => Some(Err(Error::Conflict(CLOSED))),
        WaitOutcome::TimedOut | WaitOutcome::ShuttingDown => None,
    }
}
