//! Resuming a detached agent: the session's resume target is told the answer
//! (docs/DESIGN.md "Resume target"). Accepted means a webhook answered 2xx within
//! [`WEBHOOK_TIMEOUT`], or a command was started.
//!
//! Both kinds are the operator's to bound, since whoever creates a session
//! names its target: commands run only programs the operator allowed
//! ([`AllowedCommands`]), and under auth webhooks reach only the public
//! internet unless the operator allowed more ([`WebhookNetworks`]). Both
//! are checked at session creation and again at dispatch.

mod command;
mod exchange;
pub mod network;
mod peer_api;
mod webhook;

use serde::Serialize;

pub use clarify_core::api::ResumeTarget;
pub use command::{AllowedCommands, COMMAND_CONCURRENCY, COMMAND_TIMEOUT};
pub use network::WebhookNetworks;
pub use webhook::{
    Sent, URL_PATTERN as WEBHOOK_URL_PATTERN, WEBHOOK_TIMEOUT, Webhooks,
    parse_url as parse_webhook_url,
};

/// What resume targets may do here, and the client webhooks go through.
#[derive(Debug, Clone)]
pub struct Resumer {
    commands: AllowedCommands,
    webhooks: Webhooks,
}

impl Default for Resumer {
    fn default() -> Self {
        Self::new(AllowedCommands::default(), WebhookNetworks::open())
    }
}

impl Resumer {
    /// A resumer bounded by `commands` and `networks`.
    #[must_use]
    pub fn new(commands: AllowedCommands, networks: WebhookNetworks) -> Self {
        Self {
            commands,
            webhooks: Webhooks::new(networks),
        }
    }

    /// Checks a target given at session creation: a usable URL to an
    /// address webhooks may reach, or an allowed program.
    ///
    /// # Errors
    /// A message naming the field.
    pub fn check(&self, target: &ResumeTarget) -> Result<(), String> {
        match target {
            ResumeTarget::Webhook { webhook_url } => {
                self.webhooks.check("resume.webhook_url", webhook_url)
            }
            ResumeTarget::Command { command } => match command.first() {
                Some(program) if !program.trim().is_empty() => {
                    if self.commands.allows(program) {
                        Ok(())
                    } else {
                        Err(format!(
                            "resume.command: {program} is not an allowed program (the operator \
                             allows programs by their full path with --allow-resume-command)"
                        ))
                    }
                }
                _ => Err("resume.command: must name a program".into()),
            },
        }
    }

    /// The webhook client and policy (notifications go through it too).
    #[must_use]
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// Hands the resume to `target`; `true` when it was accepted. The
    /// policy is checked again: it may have changed since the session was
    /// created.
    pub async fn dispatch(&self, target: &ResumeTarget, payload: &ResumePayload<'_>) -> bool {
        match target {
            ResumeTarget::Webhook { webhook_url } => {
                let Ok(body) = serde_json::to_string(payload) else {
                    return false;
                };
                let what = format!("resume of {}", payload.pending_id);
                self.webhooks.post(webhook_url, body, &[], &what).await == Sent::Accepted
            }
            ResumeTarget::Command { command } => self.commands.start(command, payload),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn webhook(url: &str) -> ResumeTarget {
        ResumeTarget::Webhook {
            webhook_url: url.into(),
        }
    }

    #[test]
    fn creation_refuses_what_dispatch_would_refuse_and_names_the_field() {
        let auth = Resumer::new(
            AllowedCommands::default(),
            WebhookNetworks::restricted(Vec::new()),
        );
        for url in [
            "http://127.0.0.1:9/x",
            "http://[::1]/",
            "http://169.254.169.254/latest",
            "http://2130706433/",
            "http://0x7f.1/",
        ] {
            let error = auth.check(&webhook(url)).unwrap_err();
            assert!(error.starts_with("resume.webhook_url:"), "{url}: {error}");
        }
        assert!(auth.check(&webhook("https://hooks.example.com/x")).is_ok());
        assert!(auth.check(&webhook("ftp://example.com")).is_err());
        let command = ResumeTarget::Command {
            command: vec!["/bin/sh".into(), "-c".into(), "id".into()],
        };
        let error = auth.check(&command).unwrap_err();
        assert!(error.starts_with("resume.command:"), "{error}");
        let empty = ResumeTarget::Command { command: vec![] };
        assert!(auth.check(&empty).is_err());
    }
}
