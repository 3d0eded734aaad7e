//! Sending the outbox's rows for chat apps (Slack, Telegram): a waiting
//! notice posts a message and keeps its id; a reminder replies to it; an
//! ending edits it to say how it ended, buttons gone. An ending that
//! finds no message yet (its post still being retried) is tried again.

use clarify_core::api::{Notice, NoticeKind};
use serde_json::Value;

use super::super::{Resolving, Result, Shared};
use super::{slack, telegram};
use crate::clock::now_micros;
use crate::db::chat_messages;
use crate::db::notifications::Outgoing;
use crate::resume::{Sent, Webhooks};

/// A chat an outbox row is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Chat<'a> {
    /// A Slack channel.
    Slack(&'a str),
    /// A Telegram chat.
    Telegram(&'a str),
}

/// The chat `target` names, if it is one.
pub(super) fn chat_of(target: &str) -> Option<Chat<'_>> {
    slack::channel_of(target)
        .map(Chat::Slack)
        .or_else(|| telegram::chat_of(target).map(Chat::Telegram))
}

/// One call to make: the method's URL, its body, and the bearer token if
/// the API takes one in a header.
struct Call {
    url: String,
    body: Value,
    bearer: Option<String>,
}

impl Shared {
    /// One attempt at `row`, a notice (`notice`) for `chat`.
    ///
    /// # Errors
    /// Database errors.
    pub(super) async fn send_to_chat(
        &self,
        webhooks: &Webhooks,
        row: &Outgoing,
        chat: Chat<'_>,
        notice: &Notice,
    ) -> Result<Sent> {
        let pool = self.db.pool();
        let kept = chat_messages::of(pool, &row.pending_id, &row.target).await?;
        let outcome = match notice.event {
            NoticeKind::Waiting | NoticeKind::Reminder => String::new(),
            ending => self.outcome_line(&row.pending_id, ending).await?,
        };
        let call = match (chat, notice.event, kept.as_deref()) {
            // Posted already (the row's end was not recorded): not twice.
            (_, NoticeKind::Waiting, Some(_)) => return Ok(Sent::Accepted),
            // Nothing to reply to: the post was given up.
            (_, NoticeKind::Reminder, None) => return Ok(Sent::Refused),
            // The post is still on its way: this comes after it.
            (_, _, None) if notice.event != NoticeKind::Waiting => return Ok(Sent::Failed),
            (Chat::Slack(channel), event, kept) => {
                let Some(app) = &self.notifications.slack else {
                    return Ok(Sent::Refused);
                };
                let (channel_id, ts) = kept
                    .and_then(|k| k.split_once('|'))
                    .unwrap_or((channel, ""));
                let (method, body) = match event {
                    NoticeKind::Waiting => ("chat.postMessage", slack::post(notice, channel)),
                    NoticeKind::Reminder => {
                        ("chat.postMessage", slack::remind(notice, channel_id, ts))
                    }
                    _ => (
                        "chat.update",
                        slack::update(notice, channel_id, ts, &outcome),
                    ),
                };
                Call {
                    url: format!("{}/{method}", app.api_url.trim_end_matches('/')),
                    body,
                    bearer: Some(format!("Bearer {}", app.bot_token.0)),
                }
            }
            (Chat::Telegram(chat_id), event, kept) => {
                let Some(bot) = &self.notifications.telegram else {
                    return Ok(Sent::Refused);
                };
                let message_id = kept.unwrap_or_default();
                let (method, body) = match event {
                    NoticeKind::Waiting => ("sendMessage", telegram::send(notice, chat_id)),
                    NoticeKind::Reminder => {
                        ("sendMessage", telegram::remind(notice, chat_id, message_id))
                    }
                    _ => (
                        "editMessageText",
                        telegram::edit(notice, chat_id, message_id, &outcome),
                    ),
                };
                Call {
                    url: bot.method_url(method),
                    body,
                    bearer: None,
                }
            }
        };
        let what = format!("{} message of {}", row.event, row.pending_id);
        let mut headers = vec![("user-agent", concat!("clarify/", env!("CARGO_PKG_VERSION")))];
        if let Some(bearer) = &call.bearer {
            headers.push(("authorization", bearer.as_str()));
        }
        let answer = match webhooks
            .call(&call.url, call.body.to_string(), &headers, &what)
            .await
        {
            Ok(answer) => answer,
            Err(sent) => return Ok(sent),
        };
        if answer["ok"] != true {
            // Slack says why in `error`, Telegram in `description`.
            let why = answer["error"]
                .as_str()
                .or_else(|| answer["description"].as_str());
            tracing::warn!(what, why = why.unwrap_or("?"), "chat API refused");
            return Ok(Sent::Failed);
        }
        if notice.event == NoticeKind::Waiting {
            let message_ref = match chat {
                Chat::Slack(_) => format!(
                    "{}|{}",
                    answer["channel"].as_str().unwrap_or_default(),
                    answer["ts"].as_str().unwrap_or_default()
                ),
                Chat::Telegram(_) => answer["result"]["message_id"].to_string(),
            };
            let now = now_micros();
            self.db
                .write(async |c| {
                    chat_messages::keep(c, &row.pending_id, &row.target, &message_ref, now).await
                })
                .await?;
        }
        Ok(Sent::Accepted)
    }
}

impl Resolving {
    /// Tells a Slack user `line`, seen only by them, at the `response_url`
    /// of their press; in the background, through the guarded client.
    pub fn tell_in_slack(&self, response_url: String, line: &str) {
        let Some(webhooks) = self.shared.notifications.webhooks.clone() else {
            return;
        };
        let body = serde_json::json!({"response_type": "ephemeral", "replace_original": false, "text": line});
        tokio::spawn(async move {
            let _ = webhooks
                .post(
                    &response_url,
                    body.to_string(),
                    &[],
                    "a Slack press's reply",
                )
                .await;
        });
    }

    /// Calls the Telegram bot's `method` with `body`, in the background.
    pub fn tell_in_telegram(&self, method: &'static str, body: Value) {
        let (Some(webhooks), Some(bot)) = (
            self.shared.notifications.webhooks.clone(),
            self.shared.notifications.telegram.clone(),
        ) else {
            return;
        };
        tokio::spawn(async move {
            let _ = webhooks
                .call(&bot.method_url(method), body.to_string(), &[], method)
                .await;
        });
    }
}
