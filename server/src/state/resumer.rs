//! What resume targets may do, as the server was started: kept apart from
//! the composition root so that it stays one screen of wiring.

use super::Config;
use crate::resume::{
    AllowedCommands, COMMAND_CONCURRENCY, COMMAND_TIMEOUT, Resumer, WebhookNetworks,
};

impl Config {
    /// What resume targets may do: the allowed programs, and with auth on
    /// (callers are not the machine's owner) webhooks kept off internal
    /// networks but for those allowed.
    pub(super) fn resumer(&self) -> Resumer {
        let commands = AllowedCommands::new(
            self.allowed_resume_commands.clone(),
            self.resume_command_timeout.unwrap_or(COMMAND_TIMEOUT),
            self.resume_command_concurrency
                .unwrap_or(COMMAND_CONCURRENCY),
        );
        let networks = if self.auth {
            WebhookNetworks::restricted(self.allowed_webhook_networks.clone())
        } else {
            WebhookNetworks::open()
        };
        let networks = self
            .own_webhook_sockets
            .iter()
            .fold(networks, |n, socket| n.with_own(*socket));
        Resumer::new(commands, networks)
    }
}
