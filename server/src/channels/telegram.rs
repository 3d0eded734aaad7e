//! Telegram (issue 28, item 4): a waiting bundle is sent to a chat with
//! `sendMessage` and an inline keyboard (a button per option for a
//! one-question bundle, its `callback_data` that option's answer link
//! token, within Telegram's 64 bytes), edited with `editMessageText` when
//! it ends. Updates reach `POST /api/v1/integrations/telegram/webhook`,
//! whose `X-Telegram-Bot-Api-Secret-Token` is checked in constant time: a
//! button press answers through its link; a reply to the bot's message
//! answers a one-question bundle with its text.

use clarify_core::api::Notice;
use serde_json::{Value, json};

use crate::ids::Secret;

/// How a Telegram chat is named in the outbox's `target`.
const SCHEME: &str = "telegram:";

/// Telegram's bound on a button's `callback_data`, in bytes.
pub const MAX_CALLBACK_DATA: usize = 64;

/// The bot the server sends as.
#[derive(Debug, Clone)]
pub struct TelegramBot {
    /// The bot token (from @BotFather).
    pub bot_token: Secret,
    /// The Bot API's base URL (`https://api.telegram.org`).
    pub api_url: String,
}

impl TelegramBot {
    /// The URL of Bot API `method`.
    #[must_use]
    pub fn method_url(&self, method: &str) -> String {
        format!(
            "{}/bot{}/{method}",
            self.api_url.trim_end_matches('/'),
            self.bot_token.0
        )
    }
}

/// The outbox target for `chat_id`.
#[must_use]
pub fn target(chat_id: &str) -> String {
    format!("{SCHEME}{chat_id}")
}

/// The chat of an outbox target, if it is a Telegram one.
#[must_use]
pub fn chat_of(target: &str) -> Option<&str> {
    target.strip_prefix(SCHEME)
}

fn body_text(notice: &Notice) -> String {
    let mut text = format!("An agent is waiting on “{}”", notice.task);
    if !notice.assignee.is_empty() {
        text.push_str(&format!(" (for {})", notice.assignee));
    }
    text.push(':');
    if let Some(call) = &notice.tool_call {
        text.push_str(&format!(
            "\n\n{}:\n{}",
            call.tool,
            call.shown(super::CALL_CHARS)
        ));
    }
    for question in &notice.questions {
        text.push_str("\n\n");
        text.push_str(question);
    }
    if !notice.expires_at.is_empty() {
        text.push_str(&format!("\n\nIt expires at {}.", notice.expires_at));
    }
    text
}

/// The `sendMessage` body for a waiting `notice` (plain text: nothing
/// written can become markup).
#[must_use]
pub fn send(notice: &Notice, chat_id: &str) -> Value {
    let keyboard: Vec<Value> = if notice.actions.is_empty() {
        vec![json!([{"text": "Answer in Clarify", "url": notice.url}])]
    } else {
        notice
            .actions
            .iter()
            .map(|a| {
                let token = super::slack::token_of(&a.url);
                debug_assert!(token.len() <= MAX_CALLBACK_DATA);
                json!([{"text": a.label, "callback_data": token}])
            })
            .collect()
    };
    json!({"chat_id": chat_id, "text": body_text(notice),
        "reply_markup": {"inline_keyboard": keyboard}})
}

/// The `editMessageText` body: the message says how it ended, keyboard
/// gone.
#[must_use]
pub fn edit(notice: &Notice, chat_id: &str, message_id: &str, outcome: &str) -> Value {
    let mut text = outcome.to_owned();
    for question in &notice.questions {
        text.push_str("\n\n");
        text.push_str(question);
    }
    json!({"chat_id": chat_id, "message_id": message_id.parse::<i64>().unwrap_or_default(),
        "text": text, "reply_markup": {"inline_keyboard": []}})
}

/// A reminder, as a reply to the message.
#[must_use]
pub fn remind(notice: &Notice, chat_id: &str, message_id: &str) -> Value {
    json!({"chat_id": chat_id,
        "text": format!("Reminder: still waiting; it expires at {}.", notice.expires_at),
        "reply_parameters": {"message_id": message_id.parse::<i64>().unwrap_or_default()}})
}

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

    #[test]
    fn the_method_url_holds_the_token() {
        let bot = TelegramBot {
            bot_token: Secret("123:abc".into()),
            api_url: "http://t/".into(),
        };
        assert_eq!(
            bot.method_url("sendMessage"),
            "http://t/bot123:abc/sendMessage"
        );
        assert!(!format!("{bot:?}").contains("abc"), "never printed");
    }
}
