//! Who resolved a bundle, and how: recorded by the claim itself, so a
//! winner without it cannot exist, and kept for every later attempt too.
//! Not part of the R12 response, whose bytes stay the spec's (N3a).

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// Who answers when auth is off.
pub const ANONYMOUS: &str = "anonymous";

/// How an answer arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Channel {
    /// The overlay in a browser.
    Browser,
    /// The REST API from any other program.
    Rest,
    /// An MCP client (`answer_question_kandev`).
    Mcp,
    /// The `clarify` command line.
    Cli,
    /// Nobody: the bundle expired and its defaults were chosen.
    Expiry,
    /// An answer link a notice carried (issue 28): one tap on an option.
    Link,
    /// A button in Slack (issue 28).
    Slack,
    /// A button or a reply in Telegram (issue 28).
    Telegram,
    /// A button in Discord (issue 48 item 1).
    Discord,
    /// The agent's own dialog in its terminal (issue 47), reported by the
    /// asking agent's hook after the person answered there.
    Terminal,
}

impl Channel {
    /// Its name on the wire.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Browser => "browser",
            Self::Rest => "rest",
            Self::Mcp => "mcp",
            Self::Cli => "cli",
            Self::Expiry => "expiry",
            Self::Link => "link",
            Self::Slack => "slack",
            Self::Telegram => "telegram",
            Self::Discord => "discord",
            Self::Terminal => "terminal",
        }
    }

    /// How a person says it: "in the browser", "over MCP".
    #[must_use]
    pub fn phrase(channel: &str) -> &'static str {
        match channel {
            "browser" => "in the browser",
            "rest" => "over the REST API",
            "mcp" => "over MCP",
            "cli" => "from the command line",
            "expiry" => "by its defaults, as it expired",
            "link" => "through an answer link",
            "slack" => "in Slack",
            "telegram" => "in Telegram",
            "discord" => "in Discord",
            "terminal" => "at the terminal",
            _ => "",
        }
    }
}

/// `answered_by`: who resolved the bundle, through which channel and, over
/// MCP, which client (its `clientInfo.name`; `""` elsewhere).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AnsweredBy {
    /// The user's name under `--auth`, [`ANONYMOUS`] with auth off.
    pub user: String,
    /// `browser`, `rest`, `mcp`, `cli`, `expiry`, `link`, `slack`,
    /// `telegram`, `discord` or `terminal`.
    pub channel: String,
    /// The MCP client's name; for `link`, the notice target that carried
    /// it (`ntfy`, a webhook's host); `""` for other channels.
    #[serde(default)]
    pub client: String,
    /// How many other bundles, alike, got the same answer at once (issue
    /// 29 item 5: one answer for ten agents asking the same thing); absent
    /// when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub alike: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The longest MCP client name (`clientInfo.name`) kept or shown, in
/// characters: the rest is cut off (issue 26: a 900 KB name was stored
/// with every attempt).
pub const MAX_CLIENT_NAME: usize = 128;

/// `name` cut to [`MAX_CLIENT_NAME`] characters.
#[must_use]
pub fn client_name(name: &str) -> String {
    name.chars().take(MAX_CLIENT_NAME).collect()
}

impl AnsweredBy {
    /// `user` answering through `channel` with `client`.
    #[must_use]
    pub fn new(user: &str, channel: Channel, client: &str) -> Self {
        Self {
            user: String::from(user),
            channel: String::from(channel.as_str()),
            client: client_name(client),
            alike: 0,
        }
    }
}

impl AnsweredBy {
    /// "Answered by alice in the browser, 4 min after it was asked", given
    /// the seconds between the ask and the answer. Without auth nobody is
    /// named, and the sentence says so by naming no one ("Answered in the
    /// browser"), not "by anonymous" (issue 29).
    #[must_use]
    pub fn describe(&self, after_seconds: i64) -> String {
        self.describe_as("Answered", after_seconds)
    }

    /// [`AnsweredBy::describe`] with another verb: "Declined by alice in
    /// the browser, …" for a bundle declined (issue 29: not "Answered").
    #[must_use]
    pub fn describe_as(&self, verb: &str, after_seconds: i64) -> String {
        let mut text = if self.channel == Channel::Expiry.as_str() {
            String::from("Nobody answered: the defaults were chosen")
        } else if self.user == ANONYMOUS || self.user.is_empty() {
            String::from(verb)
        } else {
            alloc::format!("{verb} by {}", self.user)
        };
        let channel = Channel::phrase(&self.channel);
        if !channel.is_empty() && self.channel != Channel::Expiry.as_str() {
            text.push(' ');
            text.push_str(channel);
        }
        if !self.client.is_empty() {
            text.push_str(&alloc::format!(" ({})", self.client));
        }
        if self.alike > 0 {
            text.push_str(&alloc::format!(
                ", one answer for {} alike questions",
                self.alike + 1
            ));
        }
        let after = match after_seconds.max(0) {
            s if s < 60 => alloc::format!("{s} s"),
            s if s < 3600 => alloc::format!("{} min", s / 60),
            s if s < 86_400 => alloc::format!("{} h", s / 3600),
            s => alloc::format!("{} d", s / 86_400),
        };
        text.push_str(&alloc::format!(", {after} after it was asked"));
        text
    }
}

/// One attempt to resolve a bundle (`GET /clarification/{id}/attempts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempt {
    /// Who tried, and how.
    #[serde(flatten)]
    pub by: AnsweredBy,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// `won`, `lost` (someone else had won: `claimed: false`) or `inactive`
    /// (409: nobody won and it can no longer be answered).
    pub outcome: String,
}

/// The attempts log of one bundle, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempts {
    /// The bundle.
    pub pending_id: String,
    /// This page of the log, oldest first, at most `limit` entries: the
    /// first page starts with the winner's attempt, which counts as one of
    /// them; the log keeps the first 100 after the winner.
    pub attempts: Vec<Attempt>,
    /// Later attempts beyond those, counted but not kept.
    #[serde(default)]
    pub more: u64,
    /// Where the next page starts (`?cursor=`); `""` when this is the last.
    #[serde(default)]
    pub next_cursor: String,
}

#[cfg(test)]
mod tests {
    use super::{AnsweredBy, Channel, MAX_CLIENT_NAME, client_name};

    #[test]
    fn answered_by_always_carries_its_three_keys() {
        let by = AnsweredBy::new("alice", Channel::Mcp, "claude-code");
        let json = serde_json::to_value(&by).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"user": "alice", "channel": "mcp", "client": "claude-code"})
        );
        let read: AnsweredBy =
            serde_json::from_value(serde_json::json!({"user": "bob", "channel": "rest"})).unwrap();
        assert_eq!(read.client, "");
    }

    #[test]
    fn a_resolution_reads_as_a_sentence() {
        let by = AnsweredBy::new("alice", Channel::Browser, "");
        assert_eq!(
            by.describe(250),
            "Answered by alice in the browser, 4 min after it was asked"
        );
        let by = AnsweredBy::new("anonymous", Channel::Mcp, "claude-code");
        assert_eq!(
            by.describe(5),
            "Answered over MCP (claude-code), 5 s after it was asked"
        );
        let by = AnsweredBy::new("bob", Channel::Browser, "");
        assert_eq!(
            by.describe_as("Declined", 5),
            "Declined by bob in the browser, 5 s after it was asked"
        );
    }

    #[test]
    fn one_answer_for_alike_bundles_says_so() {
        let mut by = AnsweredBy::new("alice", Channel::Browser, "");
        by.alike = 2;
        assert_eq!(
            by.describe(5),
            "Answered by alice in the browser, one answer for 3 alike questions, 5 s after it \
             was asked"
        );
        // Absent on the wire when 0, read as 0 when absent.
        let plain = AnsweredBy::new("alice", Channel::Browser, "");
        let json = serde_json::to_string(&plain).unwrap();
        assert!(!json.contains("alike"), "{json}");
        assert_eq!(serde_json::from_str::<AnsweredBy>(&json).unwrap(), plain);
    }

    #[test]
    fn defaults_chosen_at_expiry_read_as_nobody_s_answer() {
        let by = AnsweredBy::new("", Channel::Expiry, "");
        assert_eq!(
            by.describe(600),
            "Nobody answered: the defaults were chosen, 10 min after it was asked"
        );
    }

    #[test]
    fn channels_read_as_a_person_says_them() {
        assert_eq!(Channel::phrase("browser"), "in the browser");
        assert_eq!(Channel::phrase("mcp"), "over MCP");
        assert_eq!(Channel::phrase("carrier pigeon"), "");
    }

    #[test]
    fn a_client_name_is_kept_to_128_characters() {
        let long: String = core::iter::repeat_n('é', 900).collect();
        let by = AnsweredBy::new("alice", Channel::Mcp, &long);
        assert_eq!(by.client.chars().count(), MAX_CLIENT_NAME);
        assert_eq!(client_name("claude-code"), "claude-code");
    }
}
