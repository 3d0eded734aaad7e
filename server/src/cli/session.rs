//! `clarify session create`: a task and an agent session on it, printing the
//! agent token an agent (or `clarify ask`) authenticates with.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use clarify_core::api;
use serde_json::json;

use crate::client::{Client, expect};

/// `clarify session …`.
#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Create a task and a session; prints `{task_id, session_id, agent_token}`.
    Create(CreateArgs),
}

/// Flags of `clarify session create`.
#[derive(Debug, Clone, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub reach: super::reach::Reach,
    /// The task's title.
    #[arg(long, default_value = "Agent session")]
    pub title: String,
    /// The workspace to put the task in.
    #[arg(long)]
    pub workspace: Option<String>,
    /// Resume the agent by POSTing answers given after it stopped waiting here.
    #[arg(long, conflicts_with = "resume_command")]
    pub webhook: Option<String>,
    /// Resume the agent by running this program (prompt on stdin); give it
    /// last, after `--`.
    #[arg(long = "resume-command", num_args = 1.., allow_hyphen_values = true)]
    pub resume_command: Vec<String>,
}

/// Runs `clarify session …`.
pub async fn run(command: SessionCommand) -> ExitCode {
    let SessionCommand::Create(args) = command;
    match create(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "clarify session create: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn create(args: CreateArgs) -> Result<(), String> {
    let client = Client::new(&args.reach.server, args.reach.token.clone());
    let new_task = api::NewTask {
        title: args.title,
        workspace_id: args.workspace,
        description: None,
        project: None,
    };
    let task: api::TaskView = expect(client.post("/tasks", &new_task).await?, &[201])?;
    let resume = match (args.webhook, args.resume_command.is_empty()) {
        (Some(webhook_url), _) => Some(api::ResumeTarget::Webhook { webhook_url }),
        (None, false) => Some(api::ResumeTarget::Command {
            command: args.resume_command,
        }),
        (None, true) => None,
    };
    let path = format!("/tasks/{}/sessions", task.task.id);
    let session: api::CreatedSession = expect(
        client
            .post(
                &path,
                &api::NewSession {
                    resume,
                    description: None,
                },
            )
            .await?,
        &[201],
    )?;
    println!(
        "{}",
        json!({"task_id": task.task.id, "session_id": session.session.id, "agent_token": session.agent_token})
    );
    Ok(())
}
