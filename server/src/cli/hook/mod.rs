//! `clarify hook`: the one program Claude Code's and Codex's hooks run
//! (issue 47). It reads the hook's JSON on stdin, asks through the running
//! server as `clarify mcp` does (one Clarify session per agent session, on
//! the project's task), waits, and prints the hook's JSON answer:
//! `AskUserQuestion` answered (`PreToolUse`), a permission prompt allowed
//! or denied (`PermissionRequest`), what the person chose at the terminal
//! reported (`PostToolUse`), the session ended (`SessionEnd`).
//!
//! Never stall, never guess: past `--terminal-after` with no answer, or
//! with the server down, a bad token or an input it cannot read, it prints
//! nothing and exits 0, so the agent shows its own dialog; why goes to
//! stderr. The question stays open elsewhere until one answer wins.

mod approval;
mod asking;
mod payload;
mod questions;
mod report;
mod state;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use tokio::time::Instant;

use asking::Waited;
use payload::Payload;

/// What a hook tells the model when nobody answered in time.
pub const NO_ANSWER_IN_TIME: &str =
    "No answer in time: the user did not answer this through Clarify before it expired.";

/// Flags of `clarify hook`.
#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    #[command(flatten)]
    pub reach: crate::cli::reach::Reach,
    /// The workspace (its id) the project's task is made in.
    #[arg(long, env = "CLARIFY_WORKSPACE")]
    pub workspace: Option<String>,
    /// Seconds a hook that holds the agent's dialog back waits for an
    /// answer from elsewhere before the dialog shows (the question stays
    /// open everywhere else; the first answer wins). By default 0 for
    /// Claude Code, whose permission prompt's hook races its dialog, and
    /// 90 for Codex, which holds its dialog back while its hook runs.
    #[arg(long, value_name = "SECONDS", env = "CLARIFY_HOOK_TERMINAL_AFTER",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub terminal_after: Option<u64>,
    /// The agent whose hook this is: `claude` (Claude Code) or `codex`.
    #[arg(long, value_enum, default_value_t = AgentKind::Claude)]
    pub agent: AgentKind,
    /// Where the hook keeps each agent session's Clarify session.
    #[arg(long, env = "CLARIFY_HOOK_STATE", hide = true)]
    pub state_dir: Option<PathBuf>,
}

/// Which agent calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentKind {
    /// Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
}

impl AgentKind {
    /// `--terminal-after` as given, else this agent's default.
    #[must_use]
    pub fn terminal_after(self, given: Option<Duration>) -> Duration {
        given.unwrap_or(match self {
            Self::Claude => Duration::ZERO,
            Self::Codex => Duration::from_secs(90),
        })
    }

    /// How the session and the approvals name it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "Claude Code",
            Self::Codex => "Codex",
        }
    }
}

/// Why the hook says nothing: the agent then shows its own dialog.
#[derive(Debug)]
pub struct Quiet(pub String);

/// One hook call's settings.
#[derive(Debug)]
struct Hook {
    server: String,
    token: Option<String>,
    workspace: Option<String>,
    terminal_after: Option<Duration>,
    agent: AgentKind,
    state_dir: PathBuf,
    /// SIGTERM, listened for from the start: one sent while the hook
    /// still asks is seen when it waits.
    stopped: tokio::sync::Mutex<Option<Stop>>,
}

#[cfg(unix)]
type Stop = tokio::signal::unix::Signal;
#[cfg(not(unix))]
type Stop = ();

/// Runs one hook call; always exits 0 (a failing hook must not block the
/// agent: it falls back to its own dialog).
pub async fn run(args: HookArgs) -> ExitCode {
    let hook = Hook {
        server: args.reach.server.trim_end_matches('/').to_owned(),
        token: args.reach.token(),
        workspace: args.workspace.filter(|w| !w.trim().is_empty()),
        terminal_after: args.terminal_after.map(Duration::from_secs),
        agent: args.agent,
        state_dir: args.state_dir.unwrap_or_else(state::default_dir),
        stopped: tokio::sync::Mutex::new(stop()),
    };
    let mut input = String::new();
    let answer = match std::io::stdin().read_to_string(&mut input) {
        Ok(_) => match Payload::read(&input) {
            Ok(payload) => hook.handle(&payload).await,
            Err(why) => Err(Quiet(why)),
        },
        Err(e) => Err(Quiet(format!("cannot read the hook input: {e}"))),
    };
    match answer {
        Ok(Some(answer)) => {
            let mut out = std::io::stdout();
            let _ = writeln!(out, "{answer}");
            let _ = out.flush();
        }
        Ok(None) => {}
        Err(Quiet(why)) => say(&format!("{why}; the agent asks in the terminal")),
    }
    ExitCode::SUCCESS
}

/// A line on stderr, where the agent logs what its hooks say.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "clarify hook: {line}");
}

/// "The user declined: …" as the model reads it.
#[must_use]
pub fn declined(reason: &str) -> String {
    match reason.trim() {
        "" => "The user declined to answer.".to_owned(),
        reason => format!("The user declined: {reason}"),
    }
}

impl Hook {
    async fn handle(&self, payload: &Payload) -> Result<Option<Value>, Quiet> {
        // Codex's payloads carry a turn id: never offer it what it refuses.
        let agent = if payload.turn_id.is_empty() {
            self.agent
        } else {
            AgentKind::Codex
        };
        let held_back = Hold::Until(Instant::now() + agent.terminal_after(self.terminal_after));
        // Claude Code shows its dialog while a PermissionRequest hook runs
        // and takes whichever answer comes first, killing the hook when the
        // terminal's does (measured: docs/DESIGN.md "Agent hooks"); Codex
        // holds its dialog back until the hook returns.
        let racing = if agent == AgentKind::Claude {
            Hold::Racing
        } else {
            held_back
        };
        match (payload.hook_event_name.as_str(), payload.tool_name.as_str()) {
            ("PreToolUse", "AskUserQuestion") => {
                let bundle = questions::bundle(&payload.tool_input).map_err(Quiet)?;
                let body = self
                    .ask_and_wait(payload, bundle, held_back, AfterWait::KeepOpen)
                    .await?;
                Ok(Some(questions::pre_tool_use(&payload.tool_input, &body)))
            }
            ("PermissionRequest", "AskUserQuestion") if agent == AgentKind::Claude => {
                let bundle = questions::bundle(&payload.tool_input).map_err(Quiet)?;
                let body = self
                    .ask_and_wait(payload, bundle, racing, AfterWait::KeepOpen)
                    .await?;
                Ok(Some(questions::permission_request(
                    &payload.tool_input,
                    &body,
                )))
            }
            ("PermissionRequest", _) => {
                let bundle = approval::bundle(payload, agent);
                let body = self
                    .ask_and_wait(payload, bundle, racing, AfterWait::Withdraw)
                    .await?;
                Ok(Some(approval::output(payload, agent, &body)))
            }
            ("PostToolUse", "AskUserQuestion") => {
                self.report_terminal(payload).await.map(|()| None)
            }
            ("SessionEnd", _) => self.end_session(payload).await.map(|()| None),
            (event, tool) => Err(Quiet(format!(
                "{event} for {tool:?} is not a hook Clarify answers"
            ))),
        }
    }

    /// Asks `bundle` (or finds it asked already by an earlier hook of the
    /// same call) and waits as `hold` says; unanswered, the agent's own
    /// dialog decides and the bundle is `after` the wait.
    async fn ask_and_wait(
        &self,
        payload: &Payload,
        bundle: clarify_core::NewBundle,
        hold: Hold,
        after: AfterWait,
    ) -> Result<clarify_core::RespondBody, Quiet> {
        let keys = state::keys(payload);
        let asked = match self.asked(&payload.session_id, &keys) {
            Some(asked) => asked,
            None => {
                self.ask(&payload.session_id, &payload.cwd, &keys, bundle)
                    .await?
            }
        };
        let (open, pending_id) = asked;
        let waited = tokio::select! {
            waited = self.wait(&open, &pending_id, hold) => waited,
            () = self.killed() => Waited::Killed,
        };
        let why = match waited {
            Waited::Settled(body) => {
                // Answered here: the PostToolUse that follows has nothing
                // to report.
                self.forget(&payload.session_id, &keys);
                return Ok(body);
            }
            Waited::NotYet => format!("no answer to {pending_id} in time"),
            Waited::Killed => format!("stopped by the agent while {pending_id} waited"),
            Waited::Closed(why) => return Err(Quiet(why)),
        };
        if after == AfterWait::Withdraw {
            self.withdraw(&open, &pending_id).await;
            return Err(Quiet(format!("{why}; withdrawn, the terminal decides")));
        }
        Err(Quiet(format!("{why}; it stays open in Clarify")))
    }
}

/// How long a hook waits for an answer from elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Until then: the agent's dialog is held back meanwhile.
    Until(Instant),
    /// Until the agent stops the hook: its dialog is shown meanwhile.
    Racing,
}

#[cfg(unix)]
fn stop() -> Option<Stop> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok()
}

#[cfg(not(unix))]
fn stop() -> Option<Stop> {
    None
}

impl Hook {
    /// The agent stopped the hook (SIGTERM: the terminal answered first,
    /// or its `timeout` ran out).
    async fn killed(&self) {
        let mut stop = self.stopped.lock().await;
        #[cfg(unix)]
        if let Some(term) = stop.as_mut() {
            term.recv().await;
            return;
        }
        let _ = &mut stop;
        std::future::pending::<()>().await;
    }
}

/// What becomes of a bundle nobody answered before the agent's own dialog
/// took over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterWait {
    /// It stays open everywhere; the terminal's choice is reported
    /// (`PostToolUse`), or an answer from elsewhere settles it.
    KeepOpen,
    /// It is withdrawn: no hook reports what the terminal chose for a
    /// permission prompt, and a later answer could no longer reach the
    /// agent, so it would wait in the inbox for nothing.
    Withdraw,
}
