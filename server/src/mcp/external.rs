//! `/mcp`: discover and answer questions from outside the agent (L*, N*, T*).

use rmcp::handler::server::tool::{Extension, InputResponses, RequestState};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CacheScope, CallToolResponse, CallToolResult, Implementation, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use super::answer_here::{AnswerWithMeArgs, Call};
use super::args::{Checked, integer};
use super::inbox_app;
use super::{caller_of, result};
use crate::auth::Caller;
use crate::lifecycle::discovery::PendingArgs;
use crate::lifecycle::{Error, Via};
use crate::state::AppState;
use clarify_core::{AnswerInput, Channel, Submission, api};

/// Arguments of `list_pending_questions_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ListPendingArgs {
    /// Only questions of tasks in this workspace. Omitted or empty: every
    /// workspace you can see.
    pub workspace_id: String,
    /// Only bundles created at or after this RFC 3339 time.
    pub created_since: String,
    /// The `next_cursor` of the previous page, exactly as returned.
    pub cursor: String,
    /// Page size: default 50, at most 200.
    #[serde(deserialize_with = "integer")]
    #[schemars(schema_with = "super::args::limit_schema")]
    pub limit: i64,
}

/// One answer of `answer_question_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerArg {
    /// The question answered (`question_id` from the list).
    pub question_id: String,
    /// Chosen `option_id`s of that question; several are allowed.
    pub selected_options: Vec<String>,
    /// Free text, at most 2000 characters.
    pub custom_text: String,
}

/// Arguments of `answer_question_kandev`: the schema requires `pending_id`
/// (N9); reading it stays lenient, so that a call without it gets the
/// tool's own error naming it (`pending_id: is required`), not a
/// deserialization failure.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = require_pending_id)]
pub struct AnswerArgs {
    /// The bundle to answer.
    pub pending_id: String,
    /// One entry per question of the bundle. Leave empty when rejecting.
    pub answers: Vec<AnswerArg>,
    /// Decline the whole bundle instead of answering.
    pub rejected: bool,
    /// Why, when rejecting; at most 2000 characters.
    pub reason: String,
    /// The same as `reason` (the REST spelling).
    pub reject_reason: String,
}

/// Marks `pending_id` required in [`AnswerArgs`]'s schema.
fn require_pending_id(schema: &mut schemars::Schema) {
    schema.insert("required".to_owned(), serde_json::json!(["pending_id"]));
}

/// Arguments of `list_tasks_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ListTasksArgs {
    /// Only tasks of this workspace; omitted or empty: every visible task.
    pub workspace_id: String,
}

/// Arguments of `get_task_conversation_kandev`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ConversationArgs {
    /// The task.
    pub task_id: String,
    /// The `next_cursor` of the previous page.
    pub cursor: String,
    /// Page size: default 50, at most 200.
    #[serde(deserialize_with = "integer")]
    #[schemars(schema_with = "super::args::limit_schema")]
    pub limit: i64,
}

/// The external MCP server.
#[derive(Debug, Clone)]
pub struct ExternalServer {
    state: AppState,
}

impl ExternalServer {
    /// A server over the shared state.
    pub fn new(state: AppState) -> Self {
        Self { state }
    }

    /// Answers through the one claim (N2): `answer_question_kandev` and the
    /// inbox app's tool alike.
    async fn answer(
        &self,
        caller: &Caller,
        via: &Via,
        args: Checked<AnswerArgs>,
    ) -> CallToolResult {
        let outcome = async {
            let args = args.into_result()?;
            required("pending_id", &args.pending_id)?;
            let answers = args
                .answers
                .into_iter()
                .map(|a| AnswerInput {
                    question_id: a.question_id,
                    selected_options: a.selected_options,
                    custom_text: a.custom_text,
                })
                .collect();
            let submission =
                Submission::from_parts(answers, args.rejected, &args.reason, &args.reject_reason)
                    .map_err(|e| Error::Invalid(e.to_string()))?;
            // The same ResolveBundle as the REST endpoint (N2).
            self.state
                .lifecycle
                .resolving
                .resolve(caller, via, &args.pending_id.as_str().into(), &submission)
                .await
        }
        .await;
        result::from(outcome)
    }
}

/// Provenance: MCP, and the client's own name (from its `initialize`, or
/// in the 2026-07-28 era from the request's own metadata).
fn via(context: &RequestContext<RoleServer>) -> Via {
    Via {
        channel: Channel::Mcp,
        client: context
            .client_info()
            .map(|info| clarify_core::client_name(&info.name))
            .unwrap_or_default(),
    }
}

fn required(field: &str, value: &str) -> Result<(), Error> {
    if value.trim().is_empty() {
        return Err(Error::Invalid(format!("{field}: is required")));
    }
    Ok(())
}

#[tool_router]
impl ExternalServer {
    #[tool(
        meta = inbox_app::list_meta(),
        description = "List the clarification questions agents are waiting on, oldest first, in the workspaces you can see. Each bundle has a pending_id and questions with question_id and options (option_id, label, description): the identifiers answer_question_kandev takes. Page with next_cursor."
    )]
    async fn list_pending_questions_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<ListPendingArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        let outcome = async {
            let args = args.into_result()?;
            let args = PendingArgs {
                workspace_id: args.workspace_id,
                created_since: args.created_since,
                cursor: args.cursor,
                limit: (args.limit != 0).then_some(args.limit),
            };
            self.state
                .lifecycle
                .reading
                .list_pending(&caller, &args)
                .await
        }
        .await;
        Ok(result::from(outcome))
    }

    #[tool(
        description = "Answer a pending clarification bundle: one entry per question (selected option_ids and/or custom_text), or rejected: true with an optional reason. If someone answered first you get claimed: false and their answer, not an error."
    )]
    async fn answer_question_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<AnswerArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        Ok(self.answer(&caller, &via(&context), args).await)
    }

    #[tool(
        meta = inbox_app::app_only_meta(),
        description = "The inbox app's answer (called by the app, not the model): the same as answer_question_kandev."
    )]
    async fn answer_in_inbox_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<AnswerArgs>>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        Ok(self.answer(&caller, &via(&context), args).await)
    }

    #[tool(
        description = "Answer, here in this client, the clarification questions coding agents are waiting on: each waiting bundle (or the one pending_id names) is shown to the user as a form, oldest first, and what they fill in is sent to the agent. Call it when the user wants to answer their agents' questions. Dismissing a form skips that question; the result says how each one ended, including any answered meanwhile by someone else."
    )]
    async fn answer_with_me_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<AnswerWithMeArgs>>,
        RequestState(request_state): RequestState,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller_of(&parts)?;
        let args = match args.into_result() {
            Ok(args) => args,
            Err(e) => return Ok(result::error(&e).into()),
        };
        let via = via(&context);
        let call = Call {
            state: &self.state,
            caller: &caller,
            via: &via,
            context: &context,
        };
        call.run(args, request_state, responses).await
    }

    #[tool(
        description = "List tasks (of one workspace, or all you can see) with task_pending_action and primary_session_pending_action: \"clarification\" when an agent waits for an answer, null otherwise."
    )]
    async fn list_tasks_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<ListTasksArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        let outcome = async {
            let args = args.into_result()?;
            self.state
                .lifecycle
                .reading
                .list_tasks(&caller, &args.workspace_id)
                .await
        }
        .await;
        Ok(result::from(outcome.map(|tasks| api::Tasks {
            tasks,
            next_cursor: String::new(),
        })))
    }

    #[tool(
        description = "Read a task's conversation (all its sessions), oldest first, including clarification questions and their answers. Page with next_cursor."
    )]
    async fn get_task_conversation_kandev(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<Checked<ConversationArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let caller = caller_of(&parts)?;
        let outcome = async {
            let args = args.into_result()?;
            required("task_id", &args.task_id)?;
            let limit = (args.limit != 0).then_some(args.limit);
            self.state
                .lifecycle
                .reading
                .conversation(&caller, &args.task_id, &args.cursor, limit)
                .await
        }
        .await;
        Ok(result::from(outcome))
    }
}

#[tool_handler]
impl ServerHandler for ExternalServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("clarify", "0.1.0"))
        .with_instructions("Find the questions coding agents are blocked on and answer them.")
    }

    /// Every tool, but the inbox app's own only to a host that renders
    /// apps: one that does not would offer it to its model. The list then
    /// differs by client, so no shared cache may keep it.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let apps = inbox_app::host_renders_apps(&context);
        let mut listed = ListToolsResult::with_all_items(
            Self::tool_router()
                .list_all()
                .into_iter()
                .filter(|tool| apps || !inbox_app::is_app_only(tool))
                .collect(),
        );
        if context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
        {
            listed.cache_scope = Some(CacheScope::Private);
        }
        Ok(listed)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            inbox_app::resource(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        inbox_app::read(&request.uri).map(Into::into)
    }
}
