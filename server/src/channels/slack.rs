//! Slack (issue 28, item 3): a waiting bundle is posted to a channel with
//! `chat.postMessage` in Block Kit (a button per option for a one-question
//! bundle, whose value is that option's answer link token; an "Answer in
//! Clarify" link otherwise), updated with `chat.update` when it is
//! resolved, expires or is cancelled. A press reaches
//! `POST /api/v1/integrations/slack/interactions`, signed by Slack
//! ([`verify`]: HMAC-SHA256 over `v0:{timestamp}:{body}`, five minutes at
//! most), and answers through the link as the Slack user.

use clarify_core::api::{Notice, escape_chat};
use hmac::{KeyInit as _, Mac as _};
use serde_json::{Value, json};

use crate::ids::Secret;

/// How a Slack channel is named in the outbox's `target`.
const SCHEME: &str = "slack:";

/// The oldest signed request taken, in seconds (Slack's own advice).
pub const MAX_AGE_SECONDS: i64 = 5 * 60;

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

/// Why a request to the interactions endpoint was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unsigned {
    /// No timestamp, or not a number.
    #[error("X-Slack-Request-Timestamp: missing or not a number")]
    NoTimestamp,
    /// Older (or newer) than five minutes: a replay.
    #[error("X-Slack-Request-Timestamp: more than five minutes away")]
    Stale,
    /// The signature is missing or does not match.
    #[error("X-Slack-Signature: does not match")]
    BadSignature,
}

/// Checks a request Slack signed with `secret` (constant time), and
/// returns the request's replay key: the signature as bytes, `v0=` and
/// lower-case hex, so that the same request with its hex re-cased (or its
/// timestamp written `0…`) is the same key (issue 45 item 7-P3).
///
/// # Errors
/// Which check failed.
pub fn verify(
    secret: &str,
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now_seconds: i64,
) -> Result<String, Unsigned> {
    let at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Unsigned::NoTimestamp)?;
    if (now_seconds - at).abs() > MAX_AGE_SECONDS {
        return Err(Unsigned::Stale);
    }
    let given = signature
        .strip_prefix("v0=")
        .and_then(|hex_text| hex::decode(hex_text).ok())
        .ok_or(Unsigned::BadSignature)?;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .map_err(|_| Unsigned::BadSignature)?;
    mac.update(format!("v0:{at}:").as_bytes());
    mac.update(body);
    mac.verify_slice(&given)
        .map_err(|_| Unsigned::BadSignature)?;
    Ok(format!("v0={}", hex::encode(given)))
}

/// A button press, from an interaction's `payload`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// Who pressed (their Slack user name).
    pub user: String,
    /// The button's value: an answer link's token.
    pub token: String,
    /// Where to tell the presser something only they see.
    pub response_url: String,
}

/// The press in an interaction payload (`block_actions`), if it is one.
#[must_use]
pub fn press(payload: &Value) -> Option<Press> {
    if payload["type"] != "block_actions" {
        return None;
    }
    let user = &payload["user"];
    let name = user["username"]
        .as_str()
        .or_else(|| user["name"].as_str())
        .or_else(|| user["id"].as_str())?;
    let token = payload["actions"][0]["value"].as_str()?;
    Some(Press {
        user: name.to_owned(),
        token: token.to_owned(),
        response_url: payload["response_url"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &str, at: i64, body: &str) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(format!("v0:{at}:{body}").as_bytes());
        format!("v0={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn only_a_fresh_request_signed_with_the_secret_passes() {
        let body = "payload=%7B%7D";
        let good = sign("s3cret", 1_000, body);
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), &good, 1_100),
            Ok(good.clone())
        );
        // One request, however its signature's hex is cased, is one key.
        let shouted = format!("v0={}", good["v0=".len()..].to_uppercase());
        assert_eq!(
            verify("s3cret", "01000", body.as_bytes(), &shouted, 1_100),
            Ok(good.clone())
        );
        assert_eq!(
            verify("other", "1000", body.as_bytes(), &good, 1_100),
            Err(Unsigned::BadSignature)
        );
        assert_eq!(
            verify("s3cret", "1000", b"payload=%7B%7D ", &good, 1_100),
            Err(Unsigned::BadSignature),
            "the raw body is what is signed"
        );
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), &good, 1_000 + 301),
            Err(Unsigned::Stale)
        );
        assert_eq!(
            verify("s3cret", "x", body.as_bytes(), &good, 1_000),
            Err(Unsigned::NoTimestamp)
        );
        assert_eq!(
            verify("s3cret", "1000", body.as_bytes(), "v1=00", 1_000),
            Err(Unsigned::BadSignature)
        );
    }

    #[test]
    fn what_an_agent_wrote_cannot_become_a_mention() {
        assert_eq!(
            mrkdwn("Ship **now** <!channel> & go"),
            "Ship *now* &lt;!channel&gt; &amp; go"
        );
    }

    #[test]
    fn a_press_names_its_user_and_token() {
        let payload = json!({"type": "block_actions", "user": {"id": "U1", "username": "alice"},
            "actions": [{"action_id": "answer_0", "value": "clk_link_ab"}],
            "response_url": "https://hooks.slack.com/actions/x"});
        assert_eq!(
            press(&payload),
            Some(Press {
                user: "alice".into(),
                token: "clk_link_ab".into(),
                response_url: "https://hooks.slack.com/actions/x".into()
            })
        );
        assert_eq!(press(&json!({"type": "view_submission"})), None);
    }
}
