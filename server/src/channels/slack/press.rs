//! A Slack button press, however it came (the signed HTTP route or a
//! Socket Mode envelope, issue 48 item 1): answered through the one claim
//! as the Slack user, and a late presser told the winner at the press's
//! `response_url`, only to them. One handler for both ways, so that they
//! answer alike; a press answered once is remembered, so that Slack
//! delivering it again (its acknowledgement lost with a dropped socket)
//! changes nothing and tells nobody anything.

use std::time::Duration;

use clarify_core::Channel;
use serde_json::Value;

use super::super::Channels;
use crate::clock::{micros, now_micros};
use crate::db::{Db, chat_messages};
use crate::lifecycle::{Error, Resolving};

/// How long an answered press is remembered: far longer than Slack goes
/// on redelivering an envelope.
const REMEMBER: Duration = Duration::from_secs(10 * 60);

/// A button press, from an interaction's `payload`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// Who pressed (their Slack user name).
    pub user: String,
    /// The button's value: an answer link's token.
    pub token: String,
    /// Where to tell the presser something only they see.
    pub response_url: String,
    /// What this one press is known by however often it is delivered
    /// (its `trigger_id`, else the user's id and the action's time).
    pub key: Option<String>,
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
    let action = &payload["actions"][0];
    let token = action["value"].as_str()?;
    let key = payload["trigger_id"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| {
            Some(format!(
                "{}@{}",
                user["id"].as_str()?,
                action["action_ts"].as_str()?
            ))
        });
    Some(Press {
        user: name.to_owned(),
        token: token.to_owned(),
        response_url: payload["response_url"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        key,
    })
}

/// What answers Slack presses: the one claim, the database that remembers
/// answered presses, and the channels that tell a presser.
#[derive(Debug, Clone)]
pub struct Presses {
    resolving: Resolving,
    db: Db,
    channels: Channels,
}

impl Presses {
    /// Presses answered through `resolving`, remembered in `db`, late
    /// pressers told through `channels`.
    #[must_use]
    pub fn new(resolving: Resolving, db: Db, channels: Channels) -> Self {
        Self {
            resolving,
            db,
            channels,
        }
    }

    /// Answers the press in an interaction's `payload`, if it is one (any
    /// other interaction is nothing of ours). `Ok` once it is settled: won,
    /// lost (the presser told the winner), or answered before.
    ///
    /// # Errors
    /// The claim's or the database's: the press was not answered, and
    /// Slack should deliver it again.
    pub async fn answer(&self, payload: &Value) -> Result<(), Error> {
        let Some(press) = press(payload) else {
            return Ok(());
        };
        let key = press.key.as_ref().map(|k| format!("slackpress:{k}"));
        if let Some(key) = &key
            && chat_messages::remembered(self.db.pool(), key).await?
        {
            return Ok(());
        }
        let told = match self
            .resolving
            .press_in_chat(&press.token, &press.user, Channel::Slack)
            .await
        {
            // The winner sees the message itself change.
            Ok((true, _)) => None,
            Ok((false, line)) => Some(line),
            Err(Error::NotFound(_)) => Some("This button no longer answers anything.".to_owned()),
            Err(other) => return Err(other),
        };
        if let Some(key) = &key {
            // Recorded after the claim: a press whose claim failed comes
            // again and is answered then. A failure here costs at most a
            // redelivery told the winner, never an answer.
            let now = now_micros();
            if let Err(error) =
                chat_messages::first_time(&self.db, key, now, now - micros(REMEMBER)).await
            {
                tracing::warn!(%error, "a Slack press could not be remembered");
            }
        }
        if let Some(line) = told.filter(|_| !press.response_url.is_empty()) {
            self.channels.tell_in_slack(press.response_url, &line);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
                response_url: "https://hooks.slack.com/actions/x".into(),
                key: None,
            })
        );
        assert_eq!(press(&json!({"type": "view_submission"})), None);
    }

    #[test]
    fn one_press_is_known_by_its_trigger_or_its_users_action_time() {
        let mut payload = json!({"type": "block_actions", "user": {"id": "U1", "username": "alice"},
            "actions": [{"value": "clk_link_ab", "action_ts": "1700000000.1"}]});
        assert_eq!(
            press(&payload).unwrap().key.as_deref(),
            Some("U1@1700000000.1")
        );
        payload["trigger_id"] = json!("123.456.abc");
        assert_eq!(press(&payload).unwrap().key.as_deref(), Some("123.456.abc"));
    }
}
