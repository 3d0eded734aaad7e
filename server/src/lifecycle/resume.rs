//! Resuming a detached agent: the session's resume target is told the answer
//! (DESIGN.md "resume target"). Accepted means a webhook answered 2xx within
//! [`WEBHOOK_TIMEOUT`], or a command was started.

use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt as _;

/// How long a webhook has to accept a resume.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a session's agent is resumed, as given at session creation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum ResumeTarget {
    /// POST the resume as JSON to this URL.
    Webhook {
        /// An `http://` or `https://` URL.
        webhook_url: String,
    },
    /// Start this program with the prompt on its standard input.
    Command {
        /// Program and arguments.
        command: Vec<String>,
    },
}

impl ResumeTarget {
    /// Checks what `serde` cannot: a usable URL, a non-empty command.
    ///
    /// # Errors
    /// A message naming the field.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::Webhook { webhook_url } => {
                let ok = reqwest::Url::parse(webhook_url)
                    .is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
                if ok {
                    Ok(())
                } else {
                    Err("resume.webhook_url: must be an http:// or https:// URL".into())
                }
            }
            Self::Command { command } if command.first().is_none_or(|p| p.trim().is_empty()) => {
                Err("resume.command: must name a program".into())
            }
            Self::Command { .. } => Ok(()),
        }
    }
}

/// What a resume says to the agent.
#[derive(Debug, Clone, Serialize)]
pub struct ResumePayload<'a> {
    /// The session to resume.
    pub session_id: &'a str,
    /// Its task.
    pub task_id: &'a str,
    /// The bundle answered.
    pub pending_id: &'a str,
    /// The prompt to continue with.
    pub prompt: &'a str,
    /// The R12 envelope.
    pub response: &'a clarify_core::Response,
}

/// Hands the resume to `target`; `true` when it was accepted.
pub async fn dispatch(
    client: &reqwest::Client,
    target: &ResumeTarget,
    payload: &ResumePayload<'_>,
) -> bool {
    match target {
        ResumeTarget::Webhook { webhook_url } => {
            let sent = client
                .post(webhook_url)
                .timeout(WEBHOOK_TIMEOUT)
                .json(payload)
                .send()
                .await;
            match sent {
                Ok(response) if response.status().is_success() => true,
                Ok(response) => {
                    tracing::warn!(pending_id = payload.pending_id, status = %response.status(), "resume webhook refused");
                    false
                }
                Err(error) => {
                    tracing::warn!(pending_id = payload.pending_id, %error, "resume webhook failed");
                    false
                }
            }
        }
        ResumeTarget::Command { command } => {
            let spawned = tokio::process::Command::new(&command[0])
                .args(&command[1..])
                .env("CLARIFY_SESSION_ID", payload.session_id)
                .env("CLARIFY_PENDING_ID", payload.pending_id)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            match spawned {
                Ok(mut child) => {
                    let prompt = payload.prompt.as_bytes().to_vec();
                    tokio::spawn(async move {
                        if let Some(mut stdin) = child.stdin.take() {
                            let _ = stdin.write_all(&prompt).await;
                        }
                        let _ = child.wait().await;
                    });
                    true
                }
                Err(error) => {
                    tracing::warn!(pending_id = payload.pending_id, %error, "resume command failed to start");
                    false
                }
            }
        }
    }
}
