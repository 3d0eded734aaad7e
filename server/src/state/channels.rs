//! The channels a server's flags configure (issue 48): each target
//! checked against the webhooks' network policy, each chat's token paired
//! with where it posts.

use super::Config;
use crate::channels::{Channels, FIRST_RETRY, ntfy, slack, telegram};
use crate::ids::Secret;
use crate::lifecycle::Error;
use crate::resume::Resumer;

impl Config {
    /// Where notices go, each target checked against the same network
    /// policy as resume webhooks, and sent through their client.
    pub(super) fn channels(&self, resumer: &Resumer) -> Result<Channels, Error> {
        for url in &self.notify_webhooks {
            resumer
                .webhooks()
                .check("--notify-webhook", url)
                .map_err(Error::Invalid)?;
        }
        let mut targets = self.notify_webhooks.clone();
        for url in &self.notify_ntfy {
            let (root, _) = ntfy::split(url).map_err(Error::Invalid)?;
            resumer
                .webhooks()
                .check("--notify-ntfy", &root)
                .map_err(Error::Invalid)?;
            targets.push(ntfy::target(url));
        }
        let (slack, telegram) = self.chats(resumer, &mut targets)?;
        let base = self
            .public_url
            .as_deref()
            .unwrap_or("http://localhost:7420");
        Channels::new(
            resumer.webhooks().clone(),
            targets,
            base,
            Some(self.notify_first_retry.unwrap_or(FIRST_RETRY)),
        )
        .with_ntfy_token(self.ntfy_token.as_ref().map(|s| s.0.as_str()))
        .with_chats(slack, telegram)
        .with_discord(&self.discord, self.public_url.as_deref())
        .map_err(Error::Invalid)
    }

    /// The Slack app and the Telegram bot, when configured, their chats
    /// added to `targets`; each needs the secret its callbacks are checked
    /// with, and its API held to the webhooks' network policy.
    fn chats(
        &self,
        resumer: &Resumer,
        targets: &mut Vec<String>,
    ) -> Result<(Option<slack::SlackApp>, Option<telegram::TelegramBot>), Error> {
        let slack = Chat {
            flags: [
                "--slack-bot-token",
                "--slack-channel",
                "--slack-signing-secret",
                "--slack-api-url",
            ],
            token: self.slack_bot_token.as_ref(),
            place: self.slack_channel.as_deref(),
            // Socket Mode's presses come on a socket Clarify opened: unsigned.
            secret_set: self.slack_signing_secret.is_some() || self.slack_app_token.is_some(),
            api_url: self
                .slack_api_url
                .as_deref()
                .unwrap_or("https://slack.com/api"),
        }
        .configured(resumer)?
        .map(|(bot_token, channel, api_url)| {
            targets.push(slack::target(channel));
            slack::SlackApp { bot_token, api_url }
        });
        slack::socket::check(self.slack_app_token.as_ref(), slack.is_some())
            .map_err(Error::Invalid)?;
        let telegram = Chat {
            flags: [
                "--telegram-bot-token",
                "--telegram-chat-id",
                "--telegram-webhook-secret",
                "--telegram-api-url",
            ],
            token: self.telegram_bot_token.as_ref(),
            place: self.telegram_chat_id.as_deref(),
            // Without a webhook secret the bot polls (issue 48 item 1).
            secret_set: true,
            api_url: self
                .telegram_api_url
                .as_deref()
                .unwrap_or("https://api.telegram.org"),
        }
        .configured(resumer)?
        .map(|(bot_token, chat, api_url)| {
            targets.push(telegram::target(chat));
            telegram::TelegramBot { bot_token, api_url }
        });
        Ok((slack, telegram))
    }
}

/// One chat app's flags, as given.
struct Chat<'a> {
    /// The token's, the place's, the callback secret's and the API's flag.
    flags: [&'static str; 4],
    token: Option<&'a Secret>,
    place: Option<&'a str>,
    secret_set: bool,
    api_url: &'a str,
}

impl<'a> Chat<'a> {
    /// The token, the place and the API URL when the app is configured;
    /// refused when half of it is, when its callbacks could not be
    /// checked, or when the policy refuses its API.
    fn configured(self, resumer: &Resumer) -> Result<Option<(Secret, &'a str, String)>, Error> {
        let [token_flag, place_flag, secret_flag, api_flag] = self.flags;
        match (self.token, self.place) {
            (None, None) => Ok(None),
            (Some(token), Some(place)) => {
                if !self.secret_set {
                    return Err(Error::Invalid(format!(
                        "{secret_flag}: needed with {token_flag} (its callbacks are checked with it)"
                    )));
                }
                resumer
                    .webhooks()
                    .check(api_flag, self.api_url)
                    .map_err(Error::Invalid)?;
                Ok(Some((token.clone(), place, self.api_url.to_owned())))
            }
            _ => Err(Error::Invalid(format!(
                "{place_flag}: needed with {token_flag}, and the other way round"
            ))),
        }
    }
}
