//! The stdio server's one tool, `ask_user_question_kandev`: the agent
//! surface's schema and result (`crate::mcp::ask_tool`), answered through
//! the REST API of a running server. While it waits, a dropped connection
//! or a restarted server is polled again with backoff; the question, kept
//! by the server, is never asked twice.

use std::sync::Arc;
use std::time::Duration;

use clarify_core::{RespondBody, Status, api, validate_new_bundle};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;

use super::session::{AgentSession, Open, Trouble};
use crate::client::error_text;
use crate::mcp::args::Checked;
use crate::mcp::ask_tool::{self, AskArgs, AskOut};

/// Backoff between polls of a server that does not answer.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MOST: Duration = Duration::from_secs(5);

/// The stdio MCP server.
#[derive(Debug, Clone)]
pub struct StdioAgent {
    session: Arc<AgentSession>,
    /// How long one poll blocks, and so how often progress is reported.
    progress_every: Duration,
}

impl StdioAgent {
    /// A server asking on `session`.
    pub fn new(session: Arc<AgentSession>, progress_every: Duration) -> Self {
        Self {
            session,
            progress_every,
        }
    }

    async fn ask(
        &self,
        args: AskArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<AskOut, Trouble> {
        let (bundle, expires_in_seconds) = args.into_bundle();
        // The same rules as the server's, so a bad ask is refused here
        // with the same words and costs no session.
        let questions = validate_new_bundle(&bundle)
            .map_err(|e| Trouble(e.to_string()))?
            .questions;
        // Per request in the 2026-07-28 era, from the handshake before it.
        let client = context
            .client_info()
            .map(|i| clarify_core::client_name(&i.name));
        let open = self.session.open(client.as_deref()).await?;
        let ask = api::Ask {
            bundle,
            attach: true,
            expires_in_seconds,
            ..api::Ask::default()
        };
        let base = self.session.base();
        let reply = open
            .agent
            .post("/clarification/request", &ask)
            .await
            .map_err(|_| Trouble::unreachable(base))?;
        if !matches!(reply.0, 200 | 201) {
            return Err(Trouble::from_reply(base, "the question", &reply, true));
        }
        let asked: api::Asked = serde_json::from_value(reply.1)
            .map_err(|_| Trouble(format!("{base} answered the question unexpectedly")))?;
        tracing::info!(pending_id = %asked.pending_id, "asked; waiting for the answer");
        self.wait(&open, &asked.pending_id, context)
            .await
            .map(|body| match body.status {
                Status::Expired => AskOut::expired(&asked.pending_id),
                _ => AskOut::answered(&asked.pending_id, &questions, &body),
            })
    }

    /// Polls `/wait` until the bundle is resolved, the call is cancelled
    /// (the bundle is then detached: its answer is kept for the next
    /// identical ask), or the server says it is closed.
    async fn wait(
        &self,
        open: &Open,
        pending_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<RespondBody, Trouble> {
        let progress = context.meta.get_progress_token();
        let seconds = self.progress_every.as_secs().max(1);
        let path = format!("/clarification/{pending_id}/wait?timeout={seconds}");
        let mut ticks = 0u32;
        let mut retry = RETRY_FIRST;
        loop {
            let reply = tokio::select! {
                () = context.ct.cancelled() => {
                    detach(open, pending_id).await;
                    return Err(Trouble("the call was cancelled; the question stays open and the next identical ask collects its answer".into()));
                }
                reply = open.agent.get(&path) => reply,
            };
            let note = match reply {
                Ok((200, body)) => {
                    return serde_json::from_value(body)
                        .map_err(|_| Trouble("the server's answer could not be read".into()));
                }
                Ok((409, _)) => return Err(Trouble(ask_tool::CLOSED.into())),
                Ok((504, _)) => {
                    retry = RETRY_FIRST;
                    "waiting for the user's answer"
                }
                // Shutting down (503), or a proxy in front of a server that
                // is restarting (502, 503): the question is kept; ask again.
                Ok((status, _)) if status >= 500 => {
                    tracing::warn!(
                        "{} answered {status}; polling again in {retry:?}",
                        self.session.base()
                    );
                    backoff(context, &mut retry).await;
                    "Clarify is restarting; waiting (the question stays open)"
                }
                Ok(reply) => {
                    return Err(Trouble(format!(
                        "Clarify stopped the wait: {}",
                        error_text(&reply)
                    )));
                }
                Err(_) => {
                    tracing::warn!(
                        "{} is not reachable; polling again in {retry:?}",
                        self.session.base()
                    );
                    backoff(context, &mut retry).await;
                    "Clarify is not reachable; retrying (the question stays open)"
                }
            };
            ticks += 1;
            notify(context, progress.as_ref(), ticks, note).await;
        }
    }
}

/// Sleeps `retry` (cut short by a cancelled call) and doubles it.
async fn backoff(context: &RequestContext<RoleServer>, retry: &mut Duration) {
    tokio::select! {
        () = context.ct.cancelled() => {}
        () = tokio::time::sleep(*retry) => {}
    }
    *retry = (*retry * 2).min(RETRY_MOST);
}

async fn notify(
    context: &RequestContext<RoleServer>,
    token: Option<&ProgressToken>,
    ticks: u32,
    message: &str,
) {
    if let Some(token) = token {
        let note =
            ProgressNotificationParam::new(token.clone(), f64::from(ticks)).with_message(message);
        let _ = context.peer.notify_progress(note).await;
    }
}

/// Stops waiting on the server's side too, so that the answer is kept for
/// the agent (pull delivery) rather than counted as delivered to a poll
/// nobody reads. Best effort: a server that is gone detaches it anyway.
async fn detach(open: &Open, pending_id: &str) {
    let path = format!("/clarification/{pending_id}/detach");
    let body = json!({});
    let sent = tokio::time::timeout(Duration::from_secs(3), open.agent.post(&path, &body)).await;
    if !matches!(sent, Ok(Ok((200 | 409, _)))) {
        tracing::warn!(%pending_id, "could not detach the cancelled question");
    }
}

#[tool_router]
impl StdioAgent {
    #[tool(description = ask_tool::DESCRIPTION)]
    async fn ask_user_question_kandev(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<Checked<AskArgs>>,
    ) -> Result<CallToolResult, McpError> {
        let outcome = match args.into_result() {
            Ok(args) => self.ask(args, &context).await,
            Err(e) => Err(Trouble(e.to_string())),
        };
        Ok(match outcome {
            Ok(out) => crate::mcp::result::structured(&out),
            Err(Trouble(text)) => CallToolResult::error(vec![ContentBlock::text(text)]),
        })
    }
}

#[tool_handler(
    name = "clarify",
    version = "0.1.0",
    instructions = "Ask your human when you need a decision only they can make."
)]
impl ServerHandler for StdioAgent {}
