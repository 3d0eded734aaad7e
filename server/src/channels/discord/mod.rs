//! Discord (issue 48 item 1): a waiting bundle is posted to a channel
//! through the REST API ([`message`]: a button per option of a
//! one-question bundle, its `custom_id` that option's answer link token;
//! a link to the overlay otherwise), replied to as a reminder, and edited
//! to how it ended, buttons gone. Presses come over the Gateway
//! ([`gateway`]), a WebSocket Clarify opens itself, so the server needs
//! no inbound port; each is answered through the one claim
//! ([`press`]) within Discord's three seconds.

mod config;
mod connect;
pub mod gateway;
mod heartbeat;
pub mod message;
pub mod press;
mod run;

pub use config::Flags;
pub use run::start;

use crate::ids::Secret;

/// How a Discord channel is named in the outbox's `target`.
const SCHEME: &str = "discord:";

/// Discord's REST API, version 10.
pub const API_URL: &str = "https://discord.com/api/v10";

/// The bot the server posts as.
#[derive(Debug, Clone)]
pub struct DiscordBot {
    /// The bot token (from the Developer Portal).
    pub bot_token: Secret,
    /// The REST API's base URL ([`API_URL`]).
    pub api_url: String,
    /// Whether the server has a public URL: only then is a bundle's link
    /// to the overlay worth a button.
    pub public: bool,
}

impl DiscordBot {
    /// The URL of `path` (`/channels/…`) on the REST API.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.api_url.trim_end_matches('/'))
    }

    /// The `Authorization` header's value.
    #[must_use]
    pub fn authorization(&self) -> String {
        format!("Bot {}", self.bot_token.0)
    }
}

/// The outbox target for `channel_id`.
#[must_use]
pub fn target(channel_id: &str) -> String {
    format!("{SCHEME}{channel_id}")
}

/// The channel of an outbox target, if it is a Discord one.
#[must_use]
pub fn channel_of(target: &str) -> Option<&str> {
    target.strip_prefix(SCHEME)
}
