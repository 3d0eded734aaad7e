//! A button pressed in Discord (`INTERACTION_CREATE` of a message
//! component): answered through the one claim as the Discord user, then
//! told within Discord's three seconds (`POST
//! /interactions/{id}/{token}/callback`): the winner sees the message
//! itself change to their answer, buttons gone (type 7); anyone else is
//! told, seen only by them (type 4, flag 64), who won.

use clarify_core::Channel;
use serde_json::{Value, json};

use super::DiscordBot;
use super::message::escape;
use crate::lifecycle::{Error, Resolving};
use crate::resume::Webhooks;

/// Discord's interaction type of a message component.
const MESSAGE_COMPONENT: u64 = 3;

/// Callback types: a message, and an edit of the pressed message.
const CHANNEL_MESSAGE: u64 = 4;
const UPDATE_MESSAGE: u64 = 7;

/// A message only its reader sees.
const EPHEMERAL: u64 = 1 << 6;

/// What answers presses: the claim, and the client the callbacks go
/// through.
#[derive(Debug, Clone)]
pub struct Presses {
    pub(super) resolving: Resolving,
    pub(super) webhooks: Webhooks,
    pub(super) bot: DiscordBot,
}

/// A press, read from an interaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Press {
    /// The interaction's id and token, which its callback needs.
    pub id: String,
    /// The interaction's token.
    pub token: String,
    /// Who pressed (their Discord user name).
    pub user: String,
    /// The button's `custom_id`: an answer link's token.
    pub custom_id: String,
    /// The pressed message's text, as posted.
    pub content: String,
}

/// The press an interaction is, if it is one.
#[must_use]
pub fn press(d: &Value) -> Option<Press> {
    if d["type"].as_u64() != Some(MESSAGE_COMPONENT) {
        return None;
    }
    // In a server the user is the member's; in a direct message, `user`.
    let user = d["member"]["user"]
        .as_object()
        .or_else(|| d["user"].as_object())?;
    let name = user
        .get("username")
        .and_then(Value::as_str)
        .or_else(|| user.get("id").and_then(Value::as_str))?;
    Some(Press {
        id: d["id"].as_str()?.to_owned(),
        token: d["token"].as_str()?.to_owned(),
        user: name.to_owned(),
        custom_id: d["data"]["custom_id"].as_str()?.to_owned(),
        content: d["message"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    })
}

/// The callback telling only the presser `line`.
fn ephemeral(line: &str) -> Value {
    json!({"type": CHANNEL_MESSAGE, "data": {"content": escape(line), "flags": EPHEMERAL,
        "allowed_mentions": {"parse": []}}})
}

impl Presses {
    /// Presses answered through `resolving`, told through `webhooks`.
    #[must_use]
    pub fn new(resolving: Resolving, webhooks: Webhooks, bot: DiscordBot) -> Self {
        Self {
            resolving,
            webhooks,
            bot,
        }
    }

    /// Answers the interaction `d` if it is a press, and tells the
    /// presser; anything else is left alone.
    pub async fn answer(&self, d: &Value) {
        let Some(press) = press(d) else {
            return;
        };
        let callback = match self
            .resolving
            .press_in_chat(&press.custom_id, &press.user, Channel::Discord)
            .await
        {
            Ok((true, line)) => {
                let answer = line.strip_prefix("Answered: ").unwrap_or(&line);
                let content = format!(
                    "{}\n\n**Answered by {} in Discord: {}**",
                    press.content,
                    escape(&press.user),
                    escape(answer)
                );
                json!({"type": UPDATE_MESSAGE, "data": {"content": content, "components": [],
                    "allowed_mentions": {"parse": []}}})
            }
            Ok((false, line)) => ephemeral(&line),
            Err(Error::NotFound(_)) => ephemeral("This button no longer answers anything."),
            Err(error) => {
                tracing::warn!(%error, "a Discord press could not be answered");
                ephemeral("Clarify could not take this press just now; try again.")
            }
        };
        let url = self.bot.url(&format!(
            "/interactions/{}/{}/callback",
            press.id, press.token
        ));
        let _ = self
            .webhooks
            .request(
                reqwest::Method::POST,
                &url,
                Some(callback.to_string()),
                &[],
                "a Discord press's callback",
            )
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_press_names_its_user_and_custom_id_in_a_server_or_a_dm() {
        let d = json!({"id": "1", "token": "t", "type": 3,
            "data": {"custom_id": "clk_link_ab", "component_type": 2},
            "member": {"user": {"id": "9", "username": "alice"}},
            "message": {"id": "5", "content": "Which db?"}});
        let found = press(&d).unwrap();
        assert_eq!(
            (found.user.as_str(), found.custom_id.as_str()),
            ("alice", "clk_link_ab")
        );
        let dm = json!({"id": "1", "token": "t", "type": 3, "data": {"custom_id": "x"},
            "user": {"id": "9", "username": "bob"}});
        assert_eq!(press(&dm).unwrap().user, "bob");
        assert_eq!(
            press(&json!({"type": 2})),
            None,
            "a slash command is not a press"
        );
    }
}
