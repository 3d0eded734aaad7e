//! What a Telegram update asks (a button pressed, a reply to the bot's
//! message) and how it is answered through the one claim (issue 48 item
//! 1): the same for an update the webhook route was sent and one the
//! poller fetched, so both answer identically.

use clarify_core::Channel;
use serde_json::{Value, json};

use crate::lifecycle::{self as domain, Resolving};

/// Who sent an update: their username, else their first name.
fn who(from: &Value) -> String {
    from["username"]
        .as_str()
        .or_else(|| from["first_name"].as_str())
        .map_or_else(|| from["id"].to_string(), str::to_owned)
}

/// What an update asks of us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// A button was pressed.
    Press {
        /// The callback query, to be answered.
        query_id: String,
        /// Who pressed.
        user: String,
        /// The button's data: an answer link's token.
        token: String,
    },
    /// A reply to one of the bot's messages.
    Reply {
        /// The chat.
        chat_id: String,
        /// The message replied to.
        message_id: String,
        /// The reply itself.
        reply_id: String,
        /// Who replied.
        user: String,
        /// What they wrote.
        text: String,
    },
}

/// What `update` asks, if anything we act on.
#[must_use]
pub fn update(update: &Value) -> Option<Update> {
    if let Some(query) = update.get("callback_query") {
        return Some(Update::Press {
            query_id: query["id"].as_str()?.to_owned(),
            user: who(&query["from"]),
            token: query["data"].as_str()?.to_owned(),
        });
    }
    let message = update.get("message")?;
    let replied = message.get("reply_to_message")?;
    Some(Update::Reply {
        chat_id: message["chat"]["id"].to_string(),
        message_id: replied["message_id"].to_string(),
        reply_id: message["message_id"].to_string(),
        user: who(&message["from"]),
        text: message["text"].as_str()?.to_owned(),
    })
}

/// A Bot API call that tells the person who sent an update how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Tell {
    /// `answerCallbackQuery` for a press, `sendMessage` for a reply.
    pub method: &'static str,
    /// Its body.
    pub body: Value,
}

/// Answers `update` through the claim (a press as its answer link, a reply
/// as a one-question bundle's text); what to tell its sender, if anything.
///
/// # Errors
/// The claim's, but for a button that answers nothing and a reply the
/// question cannot take, which are told.
pub async fn handle(resolving: &Resolving, update: &Value) -> Result<Option<Tell>, domain::Error> {
    match self::update(update) {
        Some(Update::Press {
            query_id,
            user,
            token,
        }) => {
            let line = match resolving
                .press_in_chat(&token, &user, Channel::Telegram)
                .await
            {
                Ok((_, line)) => line,
                Err(domain::Error::NotFound(_)) => {
                    "This button no longer answers anything.".to_owned()
                }
                Err(other) => return Err(other),
            };
            Ok(Some(Tell {
                method: "answerCallbackQuery",
                body: json!({"callback_query_id": query_id, "text": line}),
            }))
        }
        Some(Update::Reply {
            chat_id,
            message_id,
            reply_id,
            user,
            text,
        }) => {
            let target = super::target(&chat_id);
            let line = match resolving
                .reply_in_chat(&target, &message_id, &user, &text)
                .await
            {
                Ok(line) => line,
                Err(domain::Error::Invalid(why)) => Some(why),
                Err(other) => return Err(other),
            };
            Ok(line.map(|line| Tell {
                method: "sendMessage",
                body: json!({"chat_id": chat_id, "text": line,
                    "reply_parameters": {"message_id": reply_id.parse::<i64>().unwrap_or_default()}}),
            }))
        }
        None => Ok(None),
    }
}

/// What tells the sender of `update` that it changed nothing, and `why`
/// (the question is still open, say), if it is a press or a reply.
#[must_use]
pub fn refused(update: &Value, why: &str) -> Option<Tell> {
    Some(match self::update(update)? {
        Update::Press { query_id, .. } => Tell {
            method: "answerCallbackQuery",
            body: json!({"callback_query_id": query_id, "text": why}),
        },
        Update::Reply {
            chat_id, reply_id, ..
        } => Tell {
            method: "sendMessage",
            body: json!({"chat_id": chat_id, "text": why,
                "reply_parameters": {"message_id": reply_id.parse::<i64>().unwrap_or_default()}}),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_press_and_a_reply_are_read_from_updates() {
        let press = json!({"update_id": 1, "callback_query": {"id": "q9",
            "from": {"id": 7, "first_name": "Bob"}, "data": "clk_link_ab",
            "message": {"message_id": 5, "chat": {"id": -100}}}});
        assert_eq!(
            update(&press),
            Some(Update::Press {
                query_id: "q9".into(),
                user: "Bob".into(),
                token: "clk_link_ab".into()
            })
        );
        let reply = json!({"update_id": 2, "message": {"message_id": 6, "text": "after lunch",
            "chat": {"id": -100}, "from": {"id": 7, "username": "bob"},
            "reply_to_message": {"message_id": 5}}});
        assert_eq!(
            update(&reply),
            Some(Update::Reply {
                chat_id: "-100".into(),
                message_id: "5".into(),
                reply_id: "6".into(),
                user: "bob".into(),
                text: "after lunch".into()
            })
        );
        let chatter =
            json!({"update_id": 3, "message": {"message_id": 8, "text": "hi", "chat": {"id": 1}}});
        assert_eq!(
            update(&chatter),
            None,
            "only replies to the bot's messages answer"
        );
    }
}
