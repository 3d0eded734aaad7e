//! The chat apps' callbacks (issue 28): `POST
//! /api/v1/integrations/slack/interactions` (button presses, signed by
//! Slack with the app's signing secret, answered by the channel's own
//! handler, shared with Socket Mode: issue 48 item 1) and `POST
//! /api/v1/integrations/telegram/webhook` (updates, carrying the secret
//! given to `setWebhook`). Neither takes a token: the signature or the
//! secret is the credential, checked in constant time before anything is
//! read. Each answers at once (Slack allows 3 s); what the person is told
//! is sent afterwards.
//!
//! Neither reads a byte of the body for a chat that is not configured (404
//! at once), nor more than [`MAX_BODY`] (issue 45 item 6 B2: both read the
//! whole body, up to axum's 2 MB, before any check); Telegram's secret is
//! checked before its body is read.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use clarify_core::Channel;
use serde_json::{Value, json};
use subtle::ConstantTimeEq as _;

use super::error::Error;
use crate::channels::{slack, telegram};
use crate::clock::{micros, now_micros};
use crate::db::chat_messages;
use crate::lifecycle as domain;
use crate::state::AppState;

/// How long a signed request is remembered, to refuse its replay: longer
/// than Slack's timestamps are taken.
const REMEMBER: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// The largest callback read: a Slack press carries its message's blocks,
/// a Telegram update one message; both far below this.
pub const MAX_BODY: usize = 256 << 10;

/// `body`, read whole under the body deadline, at most [`MAX_BODY`].
async fn read(body: Body) -> Result<Bytes, Error> {
    axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|failed| {
            if crate::serve::body::too_slow(&failed) {
                Error::RequestTimeout
            } else {
                Error::PayloadTooLarge
            }
        })
}

/// The callbacks' routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/integrations/slack/interactions", post(slack_press))
        .route(
            "/api/v1/integrations/telegram/webhook",
            post(telegram_update),
        )
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// Whether `key` is seen for the first time (else a replay).
async fn first_time(state: &AppState, key: &str) -> Result<bool, Error> {
    let now = now_micros();
    let db = state.lifecycle.db();
    Ok(
        chat_messages::first_time(db, key, now, now - micros(REMEMBER))
            .await
            .map_err(domain::Error::from)?,
    )
}

async fn slack_press(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Error> {
    let Some(secret) = &state.config.slack_signing_secret else {
        return Err(Error::NotFound("route"));
    };
    // The signature covers the body: it has to be read to be checked.
    let body = read(body).await?;
    let key = slack::verify(
        &secret.0,
        header(&headers, "x-slack-request-timestamp"),
        &body,
        header(&headers, "x-slack-signature"),
        now_micros() / 1_000_000,
    )
    .map_err(|why| Error::BadCredentials(unsigned(why)))?;
    if !first_time(&state, &format!("slack:{key}")).await? {
        return Err(Error::BadCredentials(
            "X-Slack-Signature: this request was already taken",
        ));
    }
    let payload = form_urlencoded::parse(&body)
        .find(|(name, _)| name == "payload")
        .and_then(|(_, value)| serde_json::from_str::<Value>(&value).ok())
        .ok_or_else(|| Error::BadRequest("payload: missing or not JSON".to_owned()))?;
    // The same handler as Socket Mode's, so both answer alike.
    slack::press::Presses::new(
        state.lifecycle.resolving.clone(),
        state.db().clone(),
        state.channels.clone(),
    )
    .answer(&payload)
    .await?;
    Ok(StatusCode::OK.into_response())
}

fn unsigned(why: slack::Unsigned) -> &'static str {
    match why {
        slack::Unsigned::NoTimestamp => "X-Slack-Request-Timestamp: missing or not a number",
        slack::Unsigned::Stale => "X-Slack-Request-Timestamp: more than five minutes away",
        _ => "X-Slack-Signature: does not match",
    }
}

async fn telegram_update(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Error> {
    let Some(secret) = &state.config.telegram_webhook_secret else {
        return Err(Error::NotFound("route"));
    };
    let given = header(&headers, "x-telegram-bot-api-secret-token");
    if !bool::from(given.as_bytes().ct_eq(secret.0.as_bytes())) {
        return Err(Error::BadCredentials(
            "X-Telegram-Bot-Api-Secret-Token: does not match",
        ));
    }
    let body = read(body).await?;
    let update: Value = serde_json::from_slice(&body)
        .map_err(|_| Error::BadRequest("body: not JSON".to_owned()))?;
    // Telegram sends an update again until it is answered 200: once only.
    if !first_time(&state, &format!("telegram:{}", update["update_id"])).await? {
        return Ok(StatusCode::OK.into_response());
    }
    match telegram::update(&update) {
        Some(telegram::Update::Press {
            query_id,
            user,
            token,
        }) => {
            let line = match state
                .lifecycle
                .resolving
                .press_in_chat(&token, &user, Channel::Telegram)
                .await
            {
                Ok((_, line)) => line,
                Err(domain::Error::NotFound(_)) => {
                    "This button no longer answers anything.".to_owned()
                }
                Err(other) => return Err(other.into()),
            };
            state.channels.tell_in_telegram(
                "answerCallbackQuery",
                json!({"callback_query_id": query_id, "text": line}),
            );
        }
        Some(telegram::Update::Reply {
            chat_id,
            message_id,
            reply_id,
            user,
            text,
        }) => {
            let target = telegram::target(&chat_id);
            let line = match state
                .lifecycle
                .resolving
                .reply_in_chat(&target, &message_id, &user, &text)
                .await
            {
                Ok(line) => line,
                Err(domain::Error::Invalid(why)) => Some(why),
                Err(other) => return Err(other.into()),
            };
            if let Some(line) = line {
                state.channels.tell_in_telegram(
                    "sendMessage",
                    json!({"chat_id": chat_id, "text": line,
                        "reply_parameters": {"message_id": reply_id.parse::<i64>().unwrap_or_default()}}),
                );
            }
        }
        None => {}
    }
    Ok(StatusCode::OK.into_response())
}
