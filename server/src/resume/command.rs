//! Resume commands: a program the operator allowed, started with the prompt
//! on its standard input, bounded in time and in number: at most
//! [`COMMAND_CONCURRENCY`] run at once (issue 26), the rest wait their turn
//! in order. Accepted means the program exists and was queued; what the
//! child does afterwards is logged, never waited on by the answerer.

use std::os::unix::fs::PermissionsExt as _;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use super::ResumePayload;

/// How long a resume command may run before it is killed, by default.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// How many resume commands run at once, by default.
pub const COMMAND_CONCURRENCY: usize = 4;

/// The programs a resume command may start, by exact path
/// (`--allow-resume-command`); none by default.
#[derive(Debug, Clone)]
pub struct AllowedCommands {
    programs: Vec<String>,
    timeout: Duration,
    /// One permit per command that may run now; tokio's semaphore is fair,
    /// so those waiting start in the order they were accepted.
    running: Arc<tokio::sync::Semaphore>,
}

impl Default for AllowedCommands {
    fn default() -> Self {
        Self::new(Vec::new(), COMMAND_TIMEOUT, COMMAND_CONCURRENCY)
    }
}

impl AllowedCommands {
    /// `programs` allowed, each killed after `timeout`, `concurrency` of
    /// them running at once at most (at least one).
    #[must_use]
    pub fn new(programs: Vec<String>, timeout: Duration, concurrency: usize) -> Self {
        Self {
            programs,
            timeout,
            running: Arc::new(tokio::sync::Semaphore::new(concurrency.max(1))),
        }
    }

    /// Whether `program` (a resume command's first word) may be started.
    #[must_use]
    pub fn allows(&self, program: &str) -> bool {
        self.programs.iter().any(|allowed| allowed == program)
    }

    /// Queues `command` to run with the prompt on its stdin; `true` once
    /// queued. It starts when one of the running commands' places is free
    /// (in the order accepted), its prompt is written and the child awaited
    /// in the background, and it is killed if it outlives the time limit.
    pub fn start(&self, command: &[String], payload: &ResumePayload<'_>) -> bool {
        let pending_id = payload.pending_id.to_owned();
        let Some(program) = command.first().filter(|p| self.allows(p)) else {
            // The list changed since the session was created.
            tracing::warn!(
                pending_id,
                "resume command refused: its program is no longer allowed"
            );
            return false;
        };
        // What would fail to start later is refused now, while the claim
        // can still be taken back.
        if !executable(program) {
            tracing::warn!(
                pending_id,
                "resume command refused: its program is not an executable file"
            );
            return false;
        }
        let mut child = tokio::process::Command::new(program);
        child
            .args(&command[1..])
            .env("CLARIFY_SESSION_ID", payload.session_id)
            .env("CLARIFY_PENDING_ID", payload.pending_id)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let prompt = payload.prompt.as_bytes().to_vec();
        let (limit, running) = (self.timeout, self.running.clone());
        tokio::spawn(async move {
            let Ok(_place) = running.acquire_owned().await else {
                return;
            };
            run(child, prompt, limit, &pending_id).await;
        });
        true
    }
}

/// Whether `program` is a file someone may execute.
fn executable(program: &str) -> bool {
    std::fs::metadata(program).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs one resume command to its end or its time limit, and logs how.
async fn run(
    mut command: tokio::process::Command,
    prompt: Vec<u8>,
    limit: Duration,
    pending_id: &str,
) {
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(pending_id, %error, "resume command failed to start");
            return;
        }
    };
    let stdin = child.stdin.take();
    let run = async {
        if let Some(mut stdin) = stdin {
            // A child that never reads holds this write; the time limit
            // below ends it either way. Closing stdin then tells the child
            // the prompt is complete.
            let _ = stdin.write_all(&prompt).await;
        }
        child.wait().await
    };
    let outcome = tokio::time::timeout(limit, run).await;
    match outcome {
        Ok(Ok(status)) if status.success() => {
            tracing::info!(pending_id, %status, "resume command finished");
        }
        Ok(Ok(status)) => tracing::warn!(pending_id, %status, "resume command failed"),
        Ok(Err(error)) => tracing::warn!(pending_id, %error, "resume command lost"),
        Err(_) => {
            let killed = child.kill().await;
            tracing::warn!(
                pending_id,
                ?limit,
                ?killed,
                "resume command killed after its time limit"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_paths_are_allowed() {
        let allowed = AllowedCommands::new(
            vec!["/usr/bin/my-agent".into()],
            COMMAND_TIMEOUT,
            COMMAND_CONCURRENCY,
        );
        assert!(allowed.allows("/usr/bin/my-agent"));
        for other in [
            "my-agent",
            "/usr/bin/my-agent ",
            "/usr/bin/../bin/my-agent",
            "/bin/sh",
            "",
        ] {
            assert!(!allowed.allows(other), "{other:?}");
        }
        assert!(
            !AllowedCommands::default().allows("/bin/sh"),
            "none by default"
        );
    }
}
