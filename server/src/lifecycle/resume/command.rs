//! Resume commands: a program the operator allowed, started with the prompt
//! on its standard input, bounded in time. Started means accepted; what the
//! child does afterwards is logged, never waited on by the answerer.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use super::ResumePayload;

/// How long a resume command may run before it is killed, by default.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The programs a resume command may start, by exact path
/// (`--allow-resume-command`); none by default.
#[derive(Debug, Clone)]
pub struct AllowedCommands {
    programs: Vec<String>,
    timeout: Duration,
}

impl Default for AllowedCommands {
    fn default() -> Self {
        Self {
            programs: Vec::new(),
            timeout: COMMAND_TIMEOUT,
        }
    }
}

impl AllowedCommands {
    /// `programs` allowed, each killed after `timeout`.
    #[must_use]
    pub fn new(programs: Vec<String>, timeout: Duration) -> Self {
        Self { programs, timeout }
    }

    /// Whether `program` (a resume command's first word) may be started.
    #[must_use]
    pub fn allows(&self, program: &str) -> bool {
        self.programs.iter().any(|allowed| allowed == program)
    }

    /// Starts `command` with the prompt on its stdin; `true` once started.
    /// The prompt is written and the child awaited in the background, and
    /// the child is killed if it outlives the time limit.
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
        let spawned = tokio::process::Command::new(program)
            .args(&command[1..])
            .env("CLARIFY_SESSION_ID", payload.session_id)
            .env("CLARIFY_PENDING_ID", payload.pending_id)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => {
                tracing::warn!(pending_id, %error, "resume command failed to start");
                return false;
            }
        };
        let prompt = payload.prompt.as_bytes().to_vec();
        let limit = self.timeout;
        tokio::spawn(async move {
            let stdin = child.stdin.take();
            let run = async {
                if let Some(mut stdin) = stdin {
                    // A child that never reads holds this write; the time
                    // limit below ends it either way. Closing stdin then
                    // tells the child the prompt is complete.
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
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_paths_are_allowed() {
        let allowed = AllowedCommands::new(vec!["/usr/bin/my-agent".into()], COMMAND_TIMEOUT);
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
