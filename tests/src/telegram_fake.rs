//! The update side of [`crate::ChatApis`]'s Telegram, as the Bot API
//! documents it: `setWebhook`, `getWebhookInfo`, `deleteWebhook` and
//! `getUpdates`, a long poll answered as soon as an update is queued or
//! when its `timeout` passes. An update is kept until `getUpdates` asks
//! for an offset above its `update_id`; a `getUpdates` is refused 409
//! while a webhook is set, and a newer one ends an older one still waiting
//! with 409 ("terminated by other getUpdates request"), as Telegram does
//! when two instances of a bot poll.

use std::sync::Mutex;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The methods this side answers.
pub(crate) const METHODS: [&str; 4] = [
    "setWebhook",
    "getWebhookInfo",
    "deleteWebhook",
    "getUpdates",
];

/// The longest `getUpdates` wait Telegram allows, in seconds.
const MOST_WAIT: u64 = 50;

#[derive(Debug, Default)]
struct State {
    /// The webhook's URL, empty when none is set.
    webhook: String,
    /// Updates not yet confirmed, in order.
    queued: Vec<Value>,
    /// The last `update_id` given.
    last_id: i64,
    /// The newest `getUpdates`: an older one still waiting is ended.
    newest: u64,
    /// Each `getUpdates` refused 409.
    conflicts: u64,
    /// New polls are held and then fail unseen, as if they never reached
    /// Telegram: nothing they ask past is confirmed.
    paused: bool,
}

/// The updates a bot has not yet confirmed, and who is polling.
#[derive(Debug, Default)]
pub(crate) struct Updates {
    state: Mutex<State>,
    changed: Notify,
}

fn ok(result: Value) -> (StatusCode, Value) {
    let mut answer = json!({"ok": true});
    answer["result"] = result;
    (StatusCode::OK, answer)
}

fn conflict(state: &mut State, why: &str) -> (StatusCode, Value) {
    state.conflicts += 1;
    (
        StatusCode::CONFLICT,
        json!({"ok": false, "error_code": 409, "description": format!("Conflict: {why}")}),
    )
}

const WEBHOOK_ACTIVE: &str = "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";

impl Updates {
    /// Queues the update `build` makes of its `update_id`; returns that id.
    pub(crate) fn queue(&self, build: impl FnOnce(i64) -> Value) -> i64 {
        let mut state = self.state.lock().unwrap();
        state.last_id += 1;
        let id = state.last_id;
        let mut update = build(id);
        update["update_id"] = json!(id);
        state.queued.push(update);
        drop(state);
        self.changed.notify_waiters();
        id
    }

    /// Sets the webhook (empty: none), as `setWebhook` does.
    pub(crate) fn set_webhook(&self, url: &str) {
        self.state.lock().unwrap().webhook = url.to_owned();
        self.changed.notify_waiters();
    }

    /// The webhook set, empty when none.
    pub(crate) fn webhook(&self) -> String {
        self.state.lock().unwrap().webhook.clone()
    }

    /// Holds every new `getUpdates` until [`Updates::resume`], which
    /// fails it (502) without confirming anything.
    pub(crate) fn pause(&self) {
        self.state.lock().unwrap().paused = true;
    }

    /// Ends [`Updates::pause`].
    pub(crate) fn resume(&self) {
        self.state.lock().unwrap().paused = false;
        self.changed.notify_waiters();
    }

    /// Whether a poll had to wait out a pause (returns once there is none).
    async fn paused(&self) -> bool {
        let mut waited = false;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.state.lock().unwrap().paused {
                return waited;
            }
            waited = true;
            notified.await;
        }
    }

    /// How many `getUpdates` were refused 409.
    pub(crate) fn conflicts(&self) -> u64 {
        self.state.lock().unwrap().conflicts
    }

    /// How many updates are not yet confirmed.
    pub(crate) fn unconfirmed(&self) -> usize {
        self.state.lock().unwrap().queued.len()
    }

    /// Answers `method` with `body`.
    pub(crate) async fn answer(&self, method: &str, body: &Value) -> (StatusCode, Value) {
        match method {
            "setWebhook" => {
                self.set_webhook(body["url"].as_str().unwrap_or_default());
                ok(json!(true))
            }
            "deleteWebhook" => {
                if body["drop_pending_updates"] == true {
                    self.state.lock().unwrap().queued.clear();
                }
                self.set_webhook("");
                ok(json!(true))
            }
            "getWebhookInfo" => {
                let state = self.state.lock().unwrap();
                ok(
                    json!({"url": state.webhook, "has_custom_certificate": false,
                    "pending_update_count": state.queued.len()}),
                )
            }
            _ => self.get_updates(body).await,
        }
    }

    async fn get_updates(&self, body: &Value) -> (StatusCode, Value) {
        if self.paused().await {
            return (
                StatusCode::BAD_GATEWAY,
                json!({"ok": false, "error_code": 502, "description": "Bad Gateway"}),
            );
        }
        let offset = body["offset"].as_i64();
        let wait = Duration::from_secs(body["timeout"].as_u64().unwrap_or(0).min(MOST_WAIT));
        let limit = usize::try_from(body["limit"].as_u64().unwrap_or(100)).unwrap_or(100);
        let allowed: Option<Vec<String>> = body["allowed_updates"].as_array().map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect()
        });
        let mine = {
            let mut state = self.state.lock().unwrap();
            if !state.webhook.is_empty() {
                return conflict(&mut state, WEBHOOK_ACTIVE);
            }
            if let Some(offset) = offset {
                // Asking past an update confirms it.
                state
                    .queued
                    .retain(|u| u["update_id"].as_i64() >= Some(offset));
            }
            state.newest += 1;
            state.newest
        };
        // Ends an older poll still waiting.
        self.changed.notify_waiters();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state.lock().unwrap();
                if state.newest != mine {
                    return conflict(
                        &mut state,
                        "terminated by other getUpdates request; make sure that only one bot instance is running",
                    );
                }
                if !state.webhook.is_empty() {
                    return conflict(&mut state, WEBHOOK_ACTIVE);
                }
                let found: Vec<Value> = state
                    .queued
                    .iter()
                    .filter(|u| u["update_id"].as_i64() >= offset.or(Some(0)))
                    .filter(|u| {
                        allowed.as_ref().is_none_or(|kinds| {
                            kinds.is_empty() || kinds.iter().any(|k| u.get(k).is_some())
                        })
                    })
                    .take(limit)
                    .cloned()
                    .collect();
                if !found.is_empty() || tokio::time::Instant::now() >= deadline {
                    return ok(json!(found));
                }
            }
            tokio::select! {
                () = notified => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        }
    }
}
