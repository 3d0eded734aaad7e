//! `clarify ask`: ask a human from a shell or a script and print the answer
//! as JSON. Exit codes tell scripts what happened without parsing.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use clarify_core::{NewBundle, NewOption, NewQuestion, api};
use serde_json::json;

use crate::client::{Client, error_text, expect};

/// The answer arrived.
pub const EXIT_ANSWERED: u8 = 0;
/// The human declined to answer.
pub const EXIT_DECLINED: u8 = 3;
/// `--timeout` passed: the question stays open, detached, and its answer
/// will resume the session's agent.
pub const EXIT_GAVE_UP: u8 = 4;
/// The question was closed without an answer (cancelled, expired, superseded).
pub const EXIT_CLOSED: u8 = 5;
/// Interrupted (Ctrl-C): detached like a timeout.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Flags of `clarify ask`.
#[derive(Debug, Clone, Args)]
pub struct AskArgs {
    /// The Clarify server.
    #[arg(long, env = "CLARIFY_SERVER", default_value = "http://127.0.0.1:7420")]
    pub server: String,
    /// The session's agent token (`clarify session create` prints one).
    #[arg(long, env = "CLARIFY_AGENT_TOKEN", hide_env_values = true)]
    pub token: String,
    /// A question as "Prompt|Option|Option[|…]" (2–6 options); repeat for
    /// up to 4 questions.
    #[arg(long = "question", short = 'q', value_name = "PROMPT|OPTION|OPTION")]
    pub questions: Vec<String>,
    /// A question whose options may be chosen together, as for --question;
    /// asked after the --question ones.
    #[arg(
        long = "multi-select",
        short = 'm',
        value_name = "PROMPT|OPTION|OPTION"
    )]
    pub multi_select: Vec<String>,
    /// A JSON bundle `{"questions": [{"prompt", "options": [{"label"}]}], "context"}`
    /// instead of --question; `-` reads standard input.
    #[arg(long, conflicts_with_all = ["questions", "multi_select"])]
    pub file: Option<PathBuf>,
    /// Context shown above the questions.
    #[arg(long)]
    pub context: Option<String>,
    /// The person this is for (a user name): first in their inbox, named
    /// in the notices; anyone who may see it may still answer.
    #[arg(long, value_name = "USER")]
    pub assignee: Option<String>,
    /// The question expires unanswered after this long ("90s", "10m",
    /// "2h"): exit code 5, as when it is closed.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub expires_in: Option<std::time::Duration>,
    /// Stop waiting after this many seconds (0: wait until answered).
    #[arg(long, default_value_t = 0)]
    pub timeout: u64,
}

/// Runs `clarify ask`.
pub async fn run(args: AskArgs) -> ExitCode {
    match ask(args).await {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "clarify ask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn bundle(args: &AskArgs) -> Result<NewBundle, String> {
    let mut bundle: NewBundle = if let Some(path) = &args.file {
        let mut text = String::new();
        if path.as_os_str() == "-" {
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("--file: {e}"))?;
        } else {
            text = std::fs::read_to_string(path)
                .map_err(|e| format!("--file {}: {e}", path.display()))?;
        }
        serde_json::from_str(&text).map_err(|e| format!("--file: not a JSON bundle: {e}"))?
    } else {
        if args.questions.is_empty() && args.multi_select.is_empty() {
            return Err("give at least one --question \"Prompt|Option|Option\" (or --file)".into());
        }
        let single = args.questions.iter().map(|q| (q, false));
        let multi = args.multi_select.iter().map(|q| (q, true));
        let questions = single
            .chain(multi)
            .map(|(q, multi_select)| {
                let mut parts = q.split('|').map(str::trim);
                let prompt = parts.next().unwrap_or_default();
                NewQuestion {
                    prompt: prompt.to_owned(),
                    options: parts
                        .map(|label| NewOption {
                            label: label.to_owned(),
                            ..NewOption::default()
                        })
                        .collect(),
                    multi_select,
                    ..NewQuestion::default()
                }
            })
            .collect();
        NewBundle {
            questions,
            ..NewBundle::default()
        }
    };
    if let Some(context) = &args.context {
        bundle.context.clone_from(context);
    }
    if let Some(assignee) = &args.assignee {
        bundle.assignee.clone_from(assignee);
    }
    Ok(bundle)
}

async fn ask(args: AskArgs) -> Result<u8, String> {
    let body = api::Ask {
        bundle: bundle(&args)?,
        // This process polls right after asking: an instant answer is for it.
        attach: true,
        expires_in_seconds: args.expires_in.map(|d| d.as_secs().max(1)),
        ..api::Ask::default()
    };
    let client = Client::new(&args.server, Some(args.token.clone()));
    let created: api::Asked = expect(
        client.post("/clarification/request", &body).await?,
        &[200, 201],
    )?;
    let pending_id = created.pending_id;
    let view: api::BundleView = expect(
        client.get(&format!("/clarification/{pending_id}")).await?,
        &[200],
    )?;
    let task_id = view.bundle.task_id;
    let interactive = std::io::stderr().is_terminal();
    if interactive {
        say(
            &format!("Asked. Answer it at {}/t/{task_id}", client.base()),
            true,
        );
    }

    let started = Instant::now();
    let deadline = (args.timeout > 0).then(|| started + Duration::from_secs(args.timeout));
    let mut spinner = tokio::time::interval(Duration::from_millis(120));
    let frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let mut frame = 0;
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            return give_up(&client, &pending_id, interactive, EXIT_GAVE_UP).await;
        }
        let poll = left.map_or(25, |l| l.as_secs().clamp(1, 25));
        let path = format!("/clarification/{pending_id}/wait?timeout={poll}");
        let wait = client.get(&path);
        tokio::pin!(wait);
        let reply = loop {
            tokio::select! {
                reply = &mut wait => break reply?,
                _ = spinner.tick(), if interactive => {
                    frame = (frame + 1) % frames.len();
                    say(&format!("\r{} waiting for an answer ({}s) ", frames[frame], started.elapsed().as_secs()), false);
                }
                _ = tokio::signal::ctrl_c() => {
                    return give_up(&client, &pending_id, interactive, EXIT_INTERRUPTED).await;
                }
            }
        };
        match reply.0 {
            200 => {
                if interactive {
                    say(CLEAR_LINE, false);
                }
                let mut out = reply.1["response"].clone();
                out["status"] = reply.1["status"].clone();
                println!("{out}");
                let declined = out["rejected"].as_bool().unwrap_or(false);
                return Ok(if out["status"] == "expired" {
                    // Its time ran out unanswered: closed, without an answer.
                    EXIT_CLOSED
                } else if declined {
                    EXIT_DECLINED
                } else {
                    EXIT_ANSWERED
                });
            }
            504 | 503 => {}
            409 => {
                if interactive {
                    say(CLEAR_LINE, false);
                }
                println!("{}", json!({"pending_id": pending_id, "status": "closed"}));
                return Ok(EXIT_CLOSED);
            }
            _ => return Err(error_text(&reply)),
        }
    }
}

/// Clears the spinner's line.
const CLEAR_LINE: &str = "\r\x1b[K";

/// Writes to the terminal (stderr); stdout carries only the JSON result.
fn say(text: &str, newline: bool) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
    if newline {
        let _ = stderr.write_all(b"\n");
    }
    let _ = stderr.flush();
}

/// Stops waiting: the question stays open and its answer will resume the
/// session's agent (through its resume target).
async fn give_up(
    client: &Client,
    pending_id: &str,
    interactive: bool,
    code: u8,
) -> Result<u8, String> {
    let reply = client
        .post(&format!("/clarification/{pending_id}/detach"), &json!({}))
        .await?;
    if interactive {
        say(CLEAR_LINE, false);
        say(
            "Stopped waiting; the question stays open and its answer will resume the agent.",
            true,
        );
    }
    if reply.0 != 200 && reply.0 != 409 {
        return Err(error_text(&reply));
    }
    println!(
        "{}",
        json!({"pending_id": pending_id, "status": "pending", "detached": true})
    );
    Ok(code)
}
