//! `clarify mcp`: a stdio MCP server for agents, one line in any MCP
//! client (`claude mcp add clarify -- clarify mcp`). It is a client of a
//! running Clarify server's REST API, like `clarify ask`: one session per
//! process (so each conversation is its own), on the task named after the
//! project, ended when the client closes stdin. Logs go to stderr: stdout
//! is the protocol.

pub(crate) mod project;
pub(crate) mod session;
mod tool;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use rmcp::ServiceExt as _;

use crate::client::Client;
use session::AgentSession;

/// Flags of `clarify mcp`.
#[derive(Debug, Clone, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub reach: crate::cli::reach::Reach,
    /// The workspace (its id) the project's task is made in. Without it,
    /// under --auth, the task goes to your personal workspace, which no one
    /// else sees; without auth, to none (everyone's).
    #[arg(long, env = "CLARIFY_WORKSPACE")]
    pub workspace: Option<String>,
    /// Seconds between progress notifications while a question waits.
    #[arg(long, default_value_t = 10, hide = true,
          value_parser = clap::value_parser!(u64).range(1..=120))]
    pub progress_every: u64,
}

/// Runs `clarify mcp` until the client closes its standard input.
pub async fn run(args: McpArgs) -> ExitCode {
    let dir = std::env::current_dir().unwrap_or_default();
    let project = project::Project::around(&dir);
    let has_token = args.reach.token().is_some();
    let user = Client::new(&args.reach.server, args.reach.token());
    let session = Arc::new(AgentSession::new(user, has_token, project, args.workspace));
    let server = tool::StdioAgent::new(
        Arc::clone(&session),
        Duration::from_secs(args.progress_every),
    );
    let running = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        Err(error) => {
            tracing::error!("the MCP client did not start a session: {error}");
            return ExitCode::FAILURE;
        }
    };
    let quit = running.waiting().await;
    tracing::debug!(?quit, "the MCP client is gone");
    session.end().await;
    ExitCode::SUCCESS
}
