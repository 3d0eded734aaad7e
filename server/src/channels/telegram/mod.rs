//! Telegram (issue 28, item 4): a waiting bundle is sent to a chat with
//! `sendMessage` and an inline keyboard (a button per option for a
//! one-question bundle, its `callback_data` that option's answer link
//! token, within Telegram's 64 bytes), edited with `editMessageText` when
//! it ends. Updates come in one of two ways (issue 48 item 1): to `POST
//! /api/v1/integrations/telegram/webhook` when the server is reachable and
//! has a webhook secret, or fetched by the [`poll`]er (`getUpdates`) when
//! it has none; either way [`mod@update`] answers them alike: a button press
//! through its link, a reply to the bot's message as a one-question
//! bundle's text.

use clarify_core::api::Notice;
use serde_json::{Value, json};

use crate::ids::Secret;

pub mod poll;
mod update;

pub use update::{Tell, Update, handle, refused, update};

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

#[cfg(test)]
mod tests {
    use super::*;

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
