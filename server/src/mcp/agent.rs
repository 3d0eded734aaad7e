//! `/mcp/agent`: an agent asks its human and blocks until answered.
//!
//! The call sends progress notifications while it waits, so clients keep it
//! open. If the call is cancelled (or the client gives up), the bundle is
//! detached: it stays answerable and the answer resumes the agent through
//! its session's resume target.

use std::collections::BTreeMap;
use std::time::Duration;

use clarify_core::{
    NewBundle, NewOption, NewQuestion, RespondBody, agent_text, validate_new_bundle,
};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::Checked;
use super::{caller_of, result};
use crate::AppState;
use crate::auth::Caller;
use crate::lifecycle::{Error, WaitOutcome};

/// How often a blocked call reports that it is still waiting, by default.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

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
    pub expires_in_seconds: u64,
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

/// The agent MCP server.
#[derive(Debug, Clone)]
pub struct AgentServer {
    state: AppState,
}

impl AgentServer {
    /// A server over the shared state.
    pub fn new(state: AppState) -> Self {
        Self { state }
    }

    async fn ask(
        &self,
        session_id: &str,
        args: AskArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<AskOut, Error> {
        let bundle = NewBundle {
            questions: args
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
            context: args.context,
            context_paragraphs: args.context_paragraphs,
        };
        let questions = validate_new_bundle(&bundle)
            .map_err(|e| Error::Invalid(e.to_string()))?
            .questions;
        let lifecycle = &self.state.lifecycle;
        let seconds = args.expires_in_seconds;
        let expires_in = crate::lifecycle::expires_in((seconds != 0).then_some(seconds))?;
        let (created, mut waiting) = lifecycle
            .create_attached(session_id, &bundle, expires_in)
            .await?;
        let pending_id = created.pending_id;
        let progress_token = context.meta.get_progress_token();
        let every = self
            .state
            .config
            .progress_interval
            .unwrap_or(PROGRESS_EVERY);
        let mut ticks = 0u32;
        loop {
            tokio::select! {
                () = context.ct.cancelled() => {
                    drop(waiting);
                    lifecycle.detach(&pending_id).await?;
                    return Err(Error::Conflict("the call was cancelled; the question stays open and its answer will resume the agent"));
                }
                outcome = lifecycle.await_outcome(&pending_id, &mut waiting, every) => match outcome? {
                    WaitOutcome::Resolved(body) => return Ok(ask_out(&pending_id, &questions, &body)),
                    WaitOutcome::TimedOut => {
                        ticks += 1;
                        if let Some(token) = &progress_token {
                            let note = ProgressNotificationParam::new(token.clone(), f64::from(ticks))
                                .with_message("waiting for the user's answer");
                            let _ = context.peer.notify_progress(note).await;
                        }
                    }
                    WaitOutcome::Expired(_) => {
                        return Ok(AskOut {
                            pending_id,
                            answers: BTreeMap::new(),
                            rejected: false,
                            reject_reason: String::new(),
                            expired: true,
                            summary: agent_text::EXPIRED.to_owned(),
                        });
                    }
                    WaitOutcome::Closed => {
                        return Err(Error::Conflict("the question was closed before anyone answered it"));
                    }
                    WaitOutcome::ShuttingDown => {
                        return Err(Error::Conflict("the server is shutting down; the question stays open: ask again"));
                    }
                }
            }
        }
    }
}

fn ask_out(pending_id: &str, questions: &[clarify_core::Question], body: &RespondBody) -> AskOut {
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
        clarify_core::Outcome::Rejected {
            reason: response.reject_reason.clone(),
        }
    } else {
        clarify_core::Outcome::Answered(response.answers.clone())
    };
    AskOut {
        pending_id: pending_id.to_owned(),
        answers,
        rejected: response.rejected,
        reject_reason: response.reject_reason.clone(),
        expired: false,
        summary: agent_text::answer_summary(questions, &outcome),
    }
}

#[tool_router]
impl AgentServer {
    #[tool(
        description = "Ask the user 1 to 4 questions (each with 2 to 6 options; the user may also answer in free text) when you need a decision only a human can make. Blocks until the user answers, and returns the answers keyed by question id (q1, q2, …), or rejected: true if they declined."
    )]
    async fn ask_user_question_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<Checked<AskArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let Caller::Agent { session_id } = caller_of(&parts) else {
            return Ok(result::error(&Error::Forbidden(
                "an agent token is required",
            )));
        };
        let outcome = match args.into_result() {
            Ok(args) => self.ask(&session_id, args, &context).await,
            Err(e) => Err(e),
        };
        Ok(result::from(outcome))
    }
}

#[tool_handler(
    name = "clarify-agent",
    version = "0.1.0",
    instructions = "Ask your human when you need a decision only they can make."
)]
impl ServerHandler for AgentServer {}
