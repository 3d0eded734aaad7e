//! Slack (issue 28, item 3; issue 48 item 1): a waiting bundle is posted
//! to a channel with `chat.postMessage` in Block Kit (a button per option
//! for a one-question bundle, whose value is that option's answer link
//! token; an "Answer in Clarify" link otherwise), updated with
//! `chat.update` when it is resolved, expires or is cancelled (this file).
//! A press comes in one of two ways, both answered by [`press::Presses`]:
//! `POST /api/v1/integrations/slack/interactions`, signed by Slack
//! ([`signature`]), when the server has a public Request URL; or over
//! Socket Mode ([`socket`]), a WebSocket Clarify opens itself, when it has
//! an app-level token and nothing can reach it from outside.

use clarify_core::api::{Notice, escape_chat};
use serde_json::{Value, json};

use crate::ids::Secret;

mod connect;
mod frames;
pub mod press;
pub mod signature;
pub mod socket;

pub use press::{Press, press};
pub use signature::{MAX_AGE_SECONDS, Unsigned, verify};

/// How a Slack channel is named in the outbox's `target`.
const SCHEME: &str = "slack:";

/// The Slack app the server posts as.
#[derive(Debug, Clone)]
pub struct SlackApp {
    /// The bot token (`xoxb-…`).
    pub bot_token: Secret,
    /// The Web API's base URL (`https://slack.com/api`).
    pub api_url: String,
}

/// The outbox target for `channel`.
#[must_use]
pub fn target(channel: &str) -> String {
    format!("{SCHEME}{channel}")
}

/// The channel of an outbox target, if it is a Slack one.
#[must_use]
pub fn channel_of(target: &str) -> Option<&str> {
    target.strip_prefix(SCHEME)
}

/// The token of an answer link's URL.
#[must_use]
pub fn token_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or_default()
}

/// Markdown as Slack's mrkdwn: `&`, `<` and `>` escaped (nothing can
/// become a link or a mention), `**bold**` as `*bold*`.
fn mrkdwn(text: &str) -> String {
    escape_chat(text).replace("**", "*")
}

fn section(text: &str) -> Value {
    json!({"type": "section", "text": {"type": "mrkdwn", "text": text}})
}

/// The questions as mrkdwn, one per line; an approval's call first, as
/// code (a section holds 3,000 characters).
fn questions(notice: &Notice) -> String {
    let call = notice.tool_call.as_ref().map_or_else(String::new, |c| {
        format!(
            "*{}*\n```{}```\n",
            mrkdwn(&c.tool),
            escape_chat(&c.shown(super::CALL_CHARS))
        )
    });
    call + &match notice.questions.as_slice() {
        [one] => mrkdwn(one),
        many => many
            .iter()
            .map(|q| format!("• {}", mrkdwn(q)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The `chat.postMessage` body for a waiting `notice` in `channel`.
#[must_use]
pub fn post(notice: &Notice, channel: &str) -> Value {
    // The person it is for by name: a Slack mention needs their Slack id,
    // which Clarify does not know.
    let whom = match notice.assignee.as_str() {
        "" => String::new(),
        name => format!(" (for {})", mrkdwn(name)),
    };
    let mut blocks = vec![section(&format!(
        "*An agent is waiting on “{}”*{whom}\n{}",
        mrkdwn(&notice.task),
        questions(notice)
    ))];
    let buttons: Vec<Value> = if notice.actions.is_empty() {
        vec![json!({"type": "button", "action_id": "open",
            "text": {"type": "plain_text", "text": "Answer in Clarify"}, "url": notice.url})]
    } else {
        notice
            .actions
            .iter()
            .enumerate()
            .map(|(n, a)| {
                let label: String = a.label.chars().take(75).collect();
                json!({"type": "button", "action_id": format!("answer_{n}"),
                    "text": {"type": "plain_text", "text": label}, "value": token_of(&a.url)})
            })
            .collect()
    };
    blocks.push(json!({"type": "actions", "block_id": "clarify", "elements": buttons}));
    let mut context = format!("Task: {}", mrkdwn(&notice.task));
    if !notice.expires_at.is_empty() {
        context.push_str(&format!(" · expires {}", notice.expires_at));
    }
    blocks.push(json!({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]}));
    json!({"channel": channel, "text": notice.text, "blocks": blocks, "unfurl_links": false})
}

/// The `chat.update` body: the message at `ts` says how it ended,
/// `outcome` ("Answered by alice in Slack: Postgres"), buttons gone.
#[must_use]
pub fn update(notice: &Notice, channel: &str, ts: &str, outcome: &str) -> Value {
    let text = format!("*{}*\n{}", mrkdwn(outcome), questions(notice));
    json!({"channel": channel, "ts": ts, "text": outcome, "blocks": [section(&text)]})
}

/// A reminder, as a reply in the message's thread.
#[must_use]
pub fn remind(notice: &Notice, channel: &str, ts: &str) -> Value {
    json!({"channel": channel, "thread_ts": ts,
        "text": format!("Reminder: still waiting; it expires at {}.", notice.expires_at)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_an_agent_wrote_cannot_become_a_mention() {
        assert_eq!(
            mrkdwn("Ship **now** <!channel> & go"),
            "Ship *now* &lt;!channel&gt; &amp; go"
        );
    }
}
