//! Sending the outbox's rows for chat apps (Slack, Telegram, Discord): a waiting
//! notice posts a message and keeps its id; a reminder replies to it; an
//! ending edits it to say how it ended, buttons gone. An ending that
//! finds no message yet (its post still being retried) is tried again.
//! Also what a chat tells one person (a late presser) and the lines both
//! chats say.

use clarify_core::api::{Notice, NoticeKind};
use clarify_core::stored::bundle_questions;
use clarify_core::{AnsweredBy, Channel};
use serde_json::Value;

use super::webhook::USER_AGENT;
use super::{Channels, discord, slack, telegram};
use crate::clock::now_micros;
use crate::db::Db;
use crate::db::chat_messages;
use crate::db::clarification as repo;
use crate::db::notifications::Outgoing;
use crate::lifecycle::answer_text;
use crate::resume::Sent;

/// A chat an outbox row is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Chat<'a> {
    /// A Slack channel.
    Slack(&'a str),
    /// A Telegram chat.
    Telegram(&'a str),
    /// A Discord channel (issue 48 item 1).
    Discord(&'a str),
}

/// The chat `target` names, if it is one.
pub(super) fn chat_of(target: &str) -> Option<Chat<'_>> {
    slack::channel_of(target)
        .map(Chat::Slack)
        .or_else(|| telegram::chat_of(target).map(Chat::Telegram))
        .or_else(|| discord::channel_of(target).map(Chat::Discord))
}

/// One call to make: the HTTP method and URL, its body, and the
/// credential if the API takes one in a header.
struct Call {
    method: reqwest::Method,
    url: String,
    body: Value,
    bearer: Option<String>,
}

impl Channels {
    /// One attempt at `row`, a notice (`notice`) for `chat`.
    ///
    /// # Errors
    /// Database errors.
    pub(super) async fn send_to_chat(
        &self,
        db: &Db,
        row: &Outgoing,
        chat: Chat<'_>,
        notice: &Notice,
    ) -> sqlx::Result<Sent> {
        let kept = chat_messages::of(db.pool(), &row.pending_id, &row.target).await?;
        let outcome = match notice.event {
            NoticeKind::Waiting | NoticeKind::Reminder => String::new(),
            ending => outcome_line(db, &row.pending_id, ending).await?,
        };
        let call = match (chat, notice.event, kept.as_deref()) {
            // Posted already (the row's end was not recorded): not twice.
            (_, NoticeKind::Waiting, Some(_)) => return Ok(Sent::Accepted),
            // Nothing to reply to: the post was given up.
            (_, NoticeKind::Reminder, None) => return Ok(Sent::Refused),
            // The post is still on its way: this comes after it.
            (_, _, None) if notice.event != NoticeKind::Waiting => return Ok(Sent::Failed),
            (Chat::Slack(channel), event, kept) => {
                let Some(app) = &self.slack else {
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
                    method: reqwest::Method::POST,
                    url: format!("{}/{method}", app.api_url.trim_end_matches('/')),
                    body,
                    bearer: Some(format!("Bearer {}", app.bot_token.0)),
                }
            }
            (Chat::Telegram(chat_id), event, kept) => {
                let Some(bot) = &self.telegram else {
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
                    method: reqwest::Method::POST,
                    url: bot.method_url(method),
                    body,
                    bearer: None,
                }
            }
            (Chat::Discord(channel), event, kept) => {
                let Some(bot) = &self.discord else {
                    return Ok(Sent::Refused);
                };
                let message_id = kept
                    .and_then(|k| k.split_once('|'))
                    .map_or("", |(_, id)| id);
                let messages = format!("/channels/{channel}/messages");
                let (method, path, body) = match event {
                    NoticeKind::Waiting => (
                        reqwest::Method::POST,
                        messages,
                        discord::message::post(notice, bot.public),
                    ),
                    NoticeKind::Reminder => (
                        reqwest::Method::POST,
                        messages,
                        discord::message::remind(notice, message_id),
                    ),
                    _ => (
                        reqwest::Method::PATCH,
                        format!("{messages}/{message_id}"),
                        discord::message::update(notice, &outcome),
                    ),
                };
                Call {
                    method,
                    url: bot.url(&path),
                    body,
                    bearer: Some(bot.authorization()),
                }
            }
        };
        let what = format!("{} message of {}", row.event, row.pending_id);
        let mut headers = vec![("user-agent", USER_AGENT)];
        if let Some(bearer) = &call.bearer {
            headers.push(("authorization", bearer.as_str()));
        }
        let answer = match self
            .webhooks
            .request(
                call.method,
                &call.url,
                Some(call.body.to_string()),
                &headers,
                &what,
            )
            .await
        {
            Ok(answer) => answer,
            Err(sent) => return Ok(sent),
        };
        // Discord answers with the message itself.
        let ok = match chat {
            Chat::Discord(_) => answer["id"].is_string(),
            _ => answer["ok"] == true,
        };
        if !ok {
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
                Chat::Discord(_) => format!(
                    "{}|{}",
                    answer["channel_id"].as_str().unwrap_or_default(),
                    answer["id"].as_str().unwrap_or_default()
                ),
            };
            let now = now_micros();
            db.write(async |c| {
                chat_messages::keep(c, &row.pending_id, &row.target, &message_ref, now).await
            })
            .await?;
        }
        Ok(Sent::Accepted)
    }

    /// Tells a Slack user `line`, seen only by them, at the `response_url`
    /// of their press; in the background, through the guarded client.
    pub fn tell_in_slack(&self, response_url: String, line: &str) {
        let webhooks = self.webhooks.clone();
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
        let Some(bot) = self.telegram.clone() else {
            return;
        };
        let webhooks = self.webhooks.clone();
        tokio::spawn(async move {
            let _ = webhooks
                .call(&bot.method_url(method), body.to_string(), &[], method)
                .await;
        });
    }
}

/// How a bundle ended, as its chat message says it: "Answered by alice
/// in Slack: Postgres", "Expired without an answer".
async fn outcome_line(db: &Db, pending_id: &str, event: NoticeKind) -> sqlx::Result<String> {
    let lead = ending(event);
    let Some(bundle) = repo::load(db.pool(), pending_id).await? else {
        return Ok(lead.to_owned());
    };
    let (Some(winner), NoticeKind::Resolved) = (bundle.winner(), event) else {
        return Ok(lead.to_owned());
    };
    let response = winner.to_response(pending_id, "");
    let questions = bundle_questions(&bundle.messages);
    let answers: Vec<String> = questions
        .iter()
        .enumerate()
        .map(|(n, q)| {
            let one = clarify_core::Response {
                answers: response.answers.get(n).cloned().into_iter().collect(),
                ..response.clone()
            };
            answer_text(q, &one)
        })
        .collect();
    let answer = if response.rejected {
        "declined".to_owned()
    } else {
        answers.join("; ")
    };
    Ok(match bundle.answered_by() {
        Some(by) if by.channel == Channel::Expiry.as_str() => {
            format!("Nobody answered; the defaults were chosen: {answer}")
        }
        Some(by) => format!("{}: {answer}", answered(Some(&by))),
        None => format!("{lead}: {answer}"),
    })
}

/// What ended a bundle, as its updated message says it.
fn ending(event: NoticeKind) -> &'static str {
    match event {
        NoticeKind::Expired => "Expired without an answer",
        NoticeKind::Cancelled => "Cancelled by the agent",
        _ => "Answered",
    }
}

/// "Answered by alice in the browser" (plain text, unescaped), or
/// "Answered" when nobody is named.
pub(super) fn answered(by: Option<&AnsweredBy>) -> String {
    by.map_or_else(
        || "Answered".to_owned(),
        |by| {
            let how = Channel::phrase(&by.channel);
            format!("Answered by {} {how}", by.user)
                .trim_end()
                .to_owned()
        },
    )
}
