//! `/mcp/agent`: an agent asks its human and blocks until answered.
//!
//! The call sends progress notifications while it waits, so clients keep it
//! open. If the call is cancelled (or the client gives up), the bundle is
//! detached: it stays answerable and the answer resumes the agent through
//! its session's resume target.

use std::time::Duration;

use clarify_core::SessionId;
use clarify_core::validate_new_bundle;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::args::Checked;
use super::ask_tool::{self, AskArgs, AskOut};
use super::{caller_of, result};
use crate::auth::Caller;
use crate::lifecycle::{Error, WaitOutcome};
use crate::state::AppState;

/// How often a blocked call reports that it is still waiting, by default.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

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
        caller: &Caller,
        session_id: &SessionId,
        args: AskArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<AskOut, Error> {
        let (bundle, seconds) = args.into_bundle();
        let questions = validate_new_bundle(&bundle)
            .map_err(|e| Error::Invalid(e.to_string()))?
            .questions;
        let lifecycle = &self.state.lifecycle;
        // A blocked ask is a long wait, held and bounded as `/wait` is.
        let _place = lifecycle.wait_place(caller)?;
        let expires_in = crate::lifecycle::expires_in(seconds)?;
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
                    WaitOutcome::Resolved(body) => return Ok(AskOut::answered(&pending_id, &questions, &body)),
                    WaitOutcome::TimedOut => {
                        ticks += 1;
                        if let Some(token) = &progress_token {
                            let note = ProgressNotificationParam::new(token.clone(), f64::from(ticks))
                                .with_message("waiting for the user's answer");
                            let _ = context.peer.notify_progress(note).await;
                        }
                    }
                    WaitOutcome::Expired(_) => return Ok(AskOut::expired(&pending_id)),
                    WaitOutcome::Closed => {
                        return Err(Error::Conflict(ask_tool::CLOSED));
                    }
                    WaitOutcome::ShuttingDown => {
                        return Err(Error::Conflict("the server is shutting down; the question stays open: ask again"));
                    }
                }
            }
        }
    }
}

#[tool_router]
impl AgentServer {
    #[tool(description = ask_tool::DESCRIPTION)]
    async fn ask_user_question_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<Checked<AskArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        let Some(session_id) = caller.agent().map(|a| a.session_id.clone()) else {
            return Ok(result::error(&Error::Forbidden(
                "an agent token is required",
            )));
        };
        let outcome = match args.into_result() {
            Ok(args) => self.ask(&caller, &session_id, args, &context).await,
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
