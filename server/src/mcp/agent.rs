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
use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams, GetTaskResult,
    Implementation, ProtocolVersion, ServerCapabilities, ServerConfig, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use super::agent_task;
use super::args::Checked;
use super::ask_tool::{self, AskArgs};
use super::held_call::{Handover, Held};
use super::{caller_of, result};
use crate::auth::Caller;
use crate::lifecycle::Error;
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

    /// Creates the bundle and hands its wait to [`super::held_call::hold`]; what
    /// this returns is never sent (the held stream writes the result).
    async fn ask(
        &self,
        caller: &Caller,
        session_id: &SessionId,
        args: AskArgs,
        context: &RequestContext<RoleServer>,
        handover: &Handover,
    ) -> Result<(), Error> {
        let (bundle, seconds) = args.into_bundle();
        let questions = validate_new_bundle(&bundle)
            .map_err(|e| Error::Invalid(e.to_string()))?
            .questions;
        let lifecycle = &self.state.lifecycle;
        // A blocked ask is a long wait, held and bounded as `/wait` is.
        let place = lifecycle.reading.wait_place(caller)?;
        let expires_in = crate::lifecycle::expires_in(seconds)?;
        let (created, waiting) = lifecycle
            .asking
            .create_attached(session_id, &bundle, expires_in)
            .await?;
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let held = Held {
            lifecycle: lifecycle.clone(),
            pending_id: created.pending_id,
            questions,
            waiting,
            _place: place,
            progress: context.meta.get_progress_token(),
            id: context.id.clone(),
            modern,
            every: self
                .state
                .config
                .progress_interval
                .unwrap_or(PROGRESS_EVERY),
        };
        if let Err(held) = handover.give(held) {
            // Nobody to write the result: the client left while the bundle
            // was being created. It stays open; its answer resumes the agent.
            held.detach().await?;
            return Err(Error::Conflict(
                "the call was cancelled; the question stays open and its answer will resume the agent",
            ));
        }
        Ok(())
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
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller_of(&parts)?;
        let Some(session_id) = caller.agent().map(|a| a.session_id.clone()) else {
            return Ok(result::error(&Error::Forbidden("an agent token is required")).into());
        };
        let args = match args.into_result() {
            Ok(args) => args,
            Err(e) => return Ok(result::error(&e).into()),
        };
        // A client that declared the tasks extension gets a task at once.
        if agent_task::wanted(&context) {
            return Ok(agent_task::ask(&self.state, &caller, &session_id, args).await);
        }
        let handover = parts
            .extensions
            .get::<Handover>()
            .ok_or_else(|| McpError::internal_error("no hand-over for a blocking call", None))?;
        match self
            .ask(&caller, &session_id, args, &context, handover)
            .await
        {
            // Never sent: the held stream writes the call's result.
            Ok(()) => Ok(CallToolResult::success(Vec::new()).into()),
            Err(e) => Ok(result::error(&e).into()),
        }
    }

    /// The caller of a `tasks/*` request, recorded by `require_agent`.
    fn task_caller(context: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
        let parts = context
            .extensions
            .get::<http::request::Parts>()
            .ok_or_else(|| McpError::internal_error("no caller identified", None))?;
        caller_of(parts)
    }
}

#[tool_handler]
impl ServerHandler for AgentServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("clarify-agent", "0.1.0"))
        .with_instructions("Ask your human when you need a decision only they can make.")
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let caller = Self::task_caller(&context)?;
        let look = self
            .state
            .lifecycle
            .asking
            .look_at_task(&caller, &request.task_id)
            .await
            .map_err(|e| agent_task::protocol_error(&e))?;
        Ok(GetTaskResult::new(agent_task::detailed(&look)))
    }

    /// No task of this tool ever asks the client for input, so no response
    /// is outstanding: known tasks acknowledge and ignore them, as the
    /// extension says.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = Self::task_caller(&context)?;
        self.state
            .lifecycle
            .asking
            .task_of(&caller, &request.task_id)
            .await
            .map_err(|e| agent_task::protocol_error(&e))?;
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = Self::task_caller(&context)?;
        self.state
            .lifecycle
            .asking
            .cancel_task(&caller, &request.task_id)
            .await
            .map_err(|e| agent_task::protocol_error(&e))
    }
}
