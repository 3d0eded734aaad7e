//! The Discord bot as configured: a token and a channel, or neither; its
//! REST API held to the webhooks' network policy. Its presses come over
//! the gateway Clarify opens, so there is no callback secret to ask for.

use super::{API_URL, DiscordBot};
use crate::ids::Secret;
use crate::resume::Webhooks;

/// `clarify serve`'s Discord flags, as given.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// The bot's token (`CLARIFY_DISCORD_BOT_TOKEN`).
    pub bot_token: Option<Secret>,
    /// The channel posted to (`--discord-channel`, its id).
    pub channel: Option<String>,
    /// The REST API's base URL (`--discord-api-url`); [`API_URL`] when unset.
    pub api_url: Option<String>,
}

impl Flags {
    /// The bot, if a token and a channel are given, its channel added to
    /// `targets`; `public_url` tells whether a link to the overlay reaches
    /// anyone.
    ///
    /// # Errors
    /// Half of it given, a channel that is no id, an API the policy refuses.
    pub fn configured(
        &self,
        public_url: Option<&str>,
        webhooks: &Webhooks,
        targets: &mut Vec<String>,
    ) -> Result<Option<DiscordBot>, String> {
        match (&self.bot_token, self.channel.as_deref()) {
            (None, None) => Ok(None),
            (Some(token), Some(channel)) => {
                if channel.is_empty() || !channel.bytes().all(|b| b.is_ascii_digit()) {
                    return Err("--discord-channel: a channel's id, digits only".to_owned());
                }
                let api_url = self.api_url.as_deref().unwrap_or(API_URL);
                webhooks.check("--discord-api-url", api_url)?;
                targets.push(super::target(channel));
                Ok(Some(DiscordBot {
                    bot_token: token.clone(),
                    api_url: api_url.to_owned(),
                    public: public_url.is_some_and(reachable),
                }))
            }
            _ => Err(
                "--discord-channel: needed with CLARIFY_DISCORD_BOT_TOKEN, and the other way round"
                    .to_owned(),
            ),
        }
    }
}

/// Whether people elsewhere reach `url`: not a loopback name or address.
fn reachable(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = parsed.host_str().unwrap_or_default();
    match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        Ok(ip) => !ip.is_loopback(),
        Err(_) => !host.is_empty() && host != "localhost" && !host.ends_with(".localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_url_reaches_nobody_elsewhere() {
        assert!(!reachable("http://localhost:7420"));
        assert!(!reachable("http://127.0.0.1:7420/"));
        assert!(!reachable("http://[::1]:7420/"));
        assert!(reachable("https://clarify.example.com"));
    }
}
