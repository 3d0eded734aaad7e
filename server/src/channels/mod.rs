//! Every way a notice leaves (issue 45, issue 48 item 3 "Channels are one
//! room"): a plain webhook (`webhook.rs`), ntfy topics ([`ntfy`]), Slack
//! ([`slack`]), Telegram ([`telegram`]) and Discord ([`discord`]) with
//! what the chats share (`chat.rs`), and the outbox [`sender`] that posts the rows the domain
//! queued, within each target's and each owner's share.
//!
//! The domain never names a channel: it holds [`Channels`] as its
//! [`Outbound`] port (which targets a change goes to, how a link's carrier
//! is recorded, a ring when a notice is due), handed over by the
//! composition root (`state.rs`), which also starts the sender. A notice's
//! text for a channel is made here, when it is sent.

mod chat;
pub mod discord;
pub mod keeper;
pub mod ntfy;
pub mod sender;
pub mod slack;
pub mod telegram;
mod webhook;
pub mod websocket;

pub use sender::{PER_OWNER, PER_TARGET, Sender};

use std::sync::Arc;
use std::time::Duration;

use clarify_core::Channel;

use crate::lifecycle::Outbound;
use crate::resume::Webhooks;

/// How much of an approval's call a chat message or push shows (issue 47):
/// within Slack's 3,000-character sections and Telegram's 4,096-character
/// messages with room for the rest; the whole call is in Clarify.
pub const CALL_CHARS: usize = 1_500;

/// The first retry's delay; each next one doubles, up to 60 times this.
pub const FIRST_RETRY: Duration = Duration::from_secs(2);

/// Where notices go and how they are sent; cheap to clone.
#[derive(Debug, Clone)]
pub struct Channels {
    targets: Arc<[String]>,
    base: Arc<str>,
    first_retry: Duration,
    /// The resume webhooks' guarded client and network policy, which every
    /// channel sends through.
    webhooks: Webhooks,
    /// Rung when this replica queues something due now, or a retry comes
    /// due, so delivery need not wait for its next look.
    wake: Arc<tokio::sync::Notify>,
    /// The access token ntfy topics are published with, if any.
    ntfy_token: Option<Arc<str>>,
    /// What names each ntfy topic's reply topic (issue 48), once loaded.
    ntfy_replies: Option<ntfy::ReplyKey>,
    /// The Slack app channels are posted to as, if any.
    slack: Option<slack::SlackApp>,
    /// The Telegram bot chats are sent to as, if any.
    telegram: Option<telegram::TelegramBot>,
    /// The Discord bot channels are posted to as, if any.
    discord: Option<discord::DiscordBot>,
}

impl Channels {
    /// Notices to `targets` (besides each workspace's own), sent through
    /// `webhooks`, with links under `base` (the server's public URL),
    /// first retried after `first_retry` ([`FIRST_RETRY`] when `None`).
    #[must_use]
    pub fn new(
        webhooks: Webhooks,
        targets: Vec<String>,
        base: &str,
        first_retry: Option<Duration>,
    ) -> Self {
        Self {
            targets: targets.into(),
            base: base.trim_end_matches('/').into(),
            first_retry: first_retry.unwrap_or(FIRST_RETRY),
            webhooks,
            wake: Arc::default(),
            ntfy_token: None,
            ntfy_replies: None,
            slack: None,
            telegram: None,
            discord: None,
        }
    }

    /// The same, posting `slack:` targets as `slack` and sending
    /// `telegram:` ones as `telegram`.
    #[must_use]
    pub fn with_chats(
        mut self,
        slack: Option<slack::SlackApp>,
        telegram: Option<telegram::TelegramBot>,
    ) -> Self {
        self.slack = slack;
        self.telegram = telegram;
        self
    }

    /// The same, posting to the Discord channel `flags` name, if any;
    /// `public_url` tells whether a link to the overlay reaches anyone.
    ///
    /// # Errors
    /// As [`discord::Flags::configured`].
    pub fn with_discord(
        mut self,
        flags: &discord::Flags,
        public_url: Option<&str>,
    ) -> Result<Self, String> {
        let mut targets = self.targets.to_vec();
        self.discord = flags.configured(public_url, &self.webhooks, &mut targets)?;
        self.targets = targets.into();
        Ok(self)
    }

    /// The Discord bot, if any, and the client its gateway connects
    /// through.
    #[must_use]
    pub fn discord(&self) -> Option<(&discord::DiscordBot, &Webhooks)> {
        self.discord.as_ref().map(|bot| (bot, &self.webhooks))
    }

    /// The same, publishing to ntfy topics with `token` (`Bearer`).
    #[must_use]
    pub fn with_ntfy_token(mut self, token: Option<&str>) -> Self {
        self.ntfy_token = token.filter(|t| !t.is_empty()).map(Into::into);
        self
    }

    /// The same, ntfy's buttons replying to the reply topics `key` names
    /// (issue 48 item 1).
    #[must_use]
    fn with_ntfy_replies(mut self, key: ntfy::ReplyKey) -> Self {
        self.ntfy_replies = Some(key);
        self
    }

    /// The ntfy topics notices go to: what the reply subscriptions need.
    fn ntfy_topics(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter_map(|t| ntfy::topic_url(t).map(str::to_owned))
            .collect()
    }

    /// The delay before attempt `attempts + 1`, after `attempts` failed.
    fn backoff(&self, attempts: i64) -> Duration {
        let doublings = u32::try_from(attempts.clamp(1, 7) - 1).unwrap_or(0);
        (self.first_retry * 2u32.pow(doublings)).min(self.first_retry * 60)
    }
}

impl Outbound for Channels {
    fn targets(&self) -> &[String] {
        &self.targets
    }

    fn base(&self) -> &str {
        &self.base
    }

    fn slack_target(&self, channel: &str) -> Option<String> {
        self.slack.as_ref().map(|_| slack::target(channel))
    }

    fn discord_target(&self, channel: &str) -> Option<String> {
        self.discord.as_ref().map(|_| discord::target(channel))
    }

    fn client_of(&self, target: &str) -> String {
        client_of(target)
    }

    fn queued(&self) {
        self.wake.notify_one();
    }
}

/// Which channel `target` is: `ntfy`, `slack`, `telegram`, `discord`, or
/// else `webhook` (the operator's figures count by it).
#[must_use]
pub fn kind_of(target: &str) -> &'static str {
    if ntfy::topic_url(target).is_some() {
        "ntfy"
    } else if slack::channel_of(target).is_some() {
        Channel::Slack.as_str()
    } else if telegram::chat_of(target).is_some() {
        Channel::Telegram.as_str()
    } else if discord::channel_of(target).is_some() {
        Channel::Discord.as_str()
    } else {
        "webhook"
    }
}

/// The `client` an answer through a link to `target` records: ntfy's or
/// the chat's name, else the webhook's host.
fn client_of(target: &str) -> String {
    match kind_of(target) {
        "webhook" => reqwest::Url::parse(target)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_else(|| "webhook".to_owned()),
        kind => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::NOTIFY_FOR;
    use crate::resume::WebhookNetworks;

    #[test]
    fn retries_double_from_the_first_delay_up_to_sixty_times_it() {
        let webhooks = Webhooks::new(WebhookNetworks::open());
        let n = Channels::new(webhooks, Vec::new(), "http://x/", None);
        let delays: Vec<u64> = (1..=9).map(|a| n.backoff(a).as_secs()).collect();
        assert_eq!(delays, [2, 4, 8, 16, 32, 64, 120, 120, 120]);
        // About ten minutes of tries fit in NOTIFY_FOR: no notice is given
        // up after a short outage.
        let total: u64 = delays.iter().sum();
        assert!(total >= 480 && total <= NOTIFY_FOR.as_secs(), "{total}");
        assert_eq!(n.base(), "http://x");
    }

    #[test]
    fn a_link_records_the_host_that_carried_it() {
        assert_eq!(client_of("https://hooks.example:8443/x?y"), "hooks.example");
        assert_eq!(client_of("not a url"), "webhook");
        assert_eq!(client_of("ntfy:https://ntfy.example/alice"), "ntfy");
        assert_eq!(client_of("slack:C1"), "slack");
        assert_eq!(client_of("telegram:-100"), "telegram");
        assert_eq!(client_of("discord:42"), "discord");
    }
}
