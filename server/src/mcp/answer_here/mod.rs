//! `answer_with_me_kandev`: a person answers the questions waiting for
//! them inside their own MCP client, as forms (elicitation), through the
//! one claim (issue 30 item 1). Two eras: during the call
//! (`elicitation/create`, the initialize era), or as MRTR rounds
//! (`input_required` with a sealed `requestState`, 2026-07-28). A client
//! without forms is told so, with what waits.

mod form;
mod mrtr;
mod report;
mod state;

use std::collections::BTreeMap;

use clarify_core::api::BundleView;
use clarify_core::{PendingBundle, Submission};
use rmcp::model::{CallToolResponse, ElicitResult, ElicitationAction, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;

use self::report::{Line, Outcome, Report};
use self::state::{Refused, Round};
use crate::auth::Caller;
use crate::db::tasks;
use crate::lifecycle::discovery::PendingArgs;
use crate::lifecycle::{Error, Via};
use crate::state::AppState;

/// Bundles one call shows at most; the report says when more wait.
pub const MAX_FORMS: usize = 10;

/// Tries at one bundle's form when what was filled in cannot be sent.
const MAX_TRIES: u8 = 3;

/// Arguments of `answer_with_me_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerWithMeArgs {
    /// Only this bundle. Omitted or empty: each bundle waiting for you,
    /// oldest first.
    pub pending_id: String,
    /// Only bundles of tasks in this workspace.
    pub workspace_id: String,
}

/// One call, on behalf of `caller`, answered `via` the client.
pub struct Call<'a> {
    /// The shared state.
    pub state: &'a AppState,
    /// Who calls.
    pub caller: &'a Caller,
    /// The channel and client, for provenance.
    pub via: &'a Via,
    /// The call's context (peer, cancellation, era, capabilities).
    pub context: &'a RequestContext<RoleServer>,
}

/// A bundle to show, with its task's title.
struct Shown {
    bundle: PendingBundle,
    task: String,
}

impl Call<'_> {
    /// Runs the tool.
    ///
    /// # Errors
    /// A protocol error only when the call is cancelled; everything else
    /// is a tool result.
    pub async fn run(
        &self,
        args: AnswerWithMeArgs,
        request_state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Result<CallToolResponse, McpError> {
        let modern = self
            .context
            .protocol_version()
            .is_some_and(|v| !v.has_initialize());
        if let Some(sealed) = request_state {
            let key = &self.state.seal_key;
            let round = match Round::take(key, self.state.db(), &self.principal(), &sealed).await {
                Ok(round) => round,
                Err(Refused::Database(e)) => {
                    return Ok(super::result::error(&Error::from(e)).into());
                }
                Err(refused) => {
                    return Ok(super::result::error(&Error::Invalid(refused.to_string())).into());
                }
            };
            return self.retried(round, responses.unwrap_or_default()).await;
        }
        let (shown, more_waiting) = match self.waiting(&args).await {
            Ok(found) => found,
            Err(e) => return Ok(super::result::error(&e).into()),
        };
        if shown.is_empty() {
            let report = Report {
                results: Vec::new(),
                more_waiting,
            };
            return Ok(report.into_result("Nothing waits for you.").into());
        }
        if !self.shows_forms() {
            let results = shown
                .iter()
                .map(|s| {
                    let asks = s
                        .bundle
                        .questions
                        .first()
                        .map(|q| q.prompt.clone())
                        .unwrap_or_default();
                    Line::new(&s.bundle, &s.task, Outcome::Waiting, asks)
                })
                .collect();
            let report = Report {
                results,
                more_waiting,
            };
            let heading = "Your MCP client cannot show forms (elicitation), so these questions cannot be answered here. Answer them with answer_question_kandev, or in Clarify's inbox in the browser:";
            return Ok(report.into_result(heading).into());
        }
        if modern {
            let round = Round::new(&shown, 0, Vec::new(), more_waiting);
            return Ok(self.ask_round(&shown, &round, &BTreeMap::new()).into());
        }
        let mut results = Vec::with_capacity(shown.len());
        for s in shown {
            results.push(self.during_call(s).await?);
        }
        Ok(Report {
            results,
            more_waiting,
        }
        .into_result("Done:")
        .into())
    }

    /// Who the sealed state is bound to.
    fn principal(&self) -> String {
        match self.caller {
            Caller::Unscoped => "anyone".to_owned(),
            Caller::User(id) => format!("user:{id}"),
            Caller::Agent(agent) => format!("agent:{}", agent.session_id),
        }
    }

    fn shows_forms(&self) -> bool {
        self.context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            // No mode named means form (the 2025-06-18 capability).
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// The bundles to show: the one named, or the oldest waiting.
    async fn waiting(&self, args: &AnswerWithMeArgs) -> Result<(Vec<Shown>, bool), Error> {
        let lifecycle = &self.state.lifecycle;
        let (bundles, more) = if args.pending_id.trim().is_empty() {
            let page = lifecycle
                .reading
                .list_pending(
                    self.caller,
                    &PendingArgs {
                        workspace_id: args.workspace_id.clone(),
                        limit: Some(i64::try_from(MAX_FORMS).unwrap_or(i64::MAX)),
                        ..PendingArgs::default()
                    },
                )
                .await?;
            (page.bundles, !page.next_cursor.is_empty())
        } else {
            let view = lifecycle
                .reading
                .read(self.caller, &args.pending_id.trim().into())
                .await?;
            if !view.active {
                return Err(Error::Conflict("pending_id: this question no longer waits"));
            }
            (vec![view.bundle], false)
        };
        let mut titles = BTreeMap::new();
        let mut shown = Vec::with_capacity(bundles.len());
        for bundle in bundles {
            let task = self.title(&mut titles, &bundle.task_id).await;
            shown.push(Shown { bundle, task });
        }
        Ok((shown, more))
    }

    /// The title of task `task_id`, read once per call however many of its
    /// bundles wait; `""` when it cannot be read (it only names the form).
    async fn title(&self, titles: &mut BTreeMap<String, String>, task_id: &str) -> String {
        if let Some(title) = titles.get(task_id) {
            return title.clone();
        }
        let title = match tasks::get(self.state.db().pool(), task_id).await {
            Ok(task) => task.map(|t| t.title).unwrap_or_default(),
            Err(e) => {
                tracing::error!(error = %e, "answer_with_me: a task's title could not be read");
                String::new()
            }
        };
        titles.insert(task_id.to_owned(), title.clone());
        title
    }

    /// The bundle as it is now: `Err` with its line when it no longer waits.
    async fn still_waiting(&self, s: &Shown) -> Result<BundleView, Line> {
        match self
            .state
            .lifecycle
            .reading
            .read(self.caller, &s.bundle.pending_id.as_str().into())
            .await
        {
            Ok(view) if view.active => Ok(view),
            Ok(view) => Err(Line::settled(view, &s.task)),
            Err(e) => Err(Line::new(
                &s.bundle,
                &s.task,
                Outcome::Closed,
                e.to_string(),
            )),
        }
    }

    /// Sends `submission` through the one claim: a line, or the problem to
    /// show on the form when it cannot be taken as filled in.
    async fn settle(&self, s: &Shown, submission: &Submission) -> Result<Line, String> {
        let outcome = self
            .state
            .lifecycle
            .resolving
            .resolve(
                self.caller,
                self.via,
                &s.bundle.pending_id.as_str().into(),
                submission,
            )
            .await;
        match outcome {
            Ok(body) => Ok(Line::claimed(&s.bundle, &s.task, body)),
            Err(Error::Invalid(problem)) => Err(problem),
            Err(e @ Error::Conflict(_)) => Ok(Line::new(
                &s.bundle,
                &s.task,
                Outcome::Closed,
                e.to_string(),
            )),
            Err(e) => {
                if let Error::Database(cause) = &e {
                    tracing::error!(error = %cause, "answer_with_me: the claim failed");
                }
                Ok(Line::new(
                    &s.bundle,
                    &s.task,
                    Outcome::NotSent,
                    e.to_string(),
                ))
            }
        }
    }

    /// Takes one form's result: a line, or the problem to ask again with.
    async fn take(&self, s: &Shown, result: ElicitResult) -> Result<Line, String> {
        if result.action != ElicitationAction::Accept {
            // Declining or dismissing the form skips this bundle: it still
            // waits (to decline the question itself there is a field).
            return Ok(Line::new(
                &s.bundle,
                &s.task,
                Outcome::Skipped,
                String::new(),
            ));
        }
        let content = result.content.unwrap_or_default();
        let submission = form::submission(&s.bundle, &content)?;
        self.settle(s, &submission).await
    }

    /// The initialize era: the bundle's form asked during the call, again
    /// while what was filled in cannot be sent.
    async fn during_call(&self, mut s: Shown) -> Result<Line, McpError> {
        let mut problem = None;
        for _ in 0..MAX_TRIES {
            // Someone may have answered while the person was on an earlier form.
            match self.still_waiting(&s).await {
                Ok(view) => s.bundle = view.bundle,
                Err(line) => return Ok(line),
            }
            let params = form::request(&s.bundle, &s.task, problem.as_deref());
            let asked = tokio::select! {
                asked = self.context.peer.create_elicitation(params) => asked,
                () = self.context.ct.cancelled() => {
                    return Err(McpError::internal_error("cancelled", None));
                }
            };
            let result = match asked {
                Ok(result) => result,
                Err(e) => {
                    tracing::info!(error = %e, "answer_with_me: the client did not show a form");
                    let note = "your client did not show the form".to_owned();
                    return Ok(Line::new(&s.bundle, &s.task, Outcome::NotSent, note));
                }
            };
            match self.take(&s, result).await {
                Ok(line) => return Ok(line),
                Err(why) => problem = Some(why),
            }
        }
        let note = problem.unwrap_or_default();
        Ok(Line::new(&s.bundle, &s.task, Outcome::NotSent, note))
    }
}
