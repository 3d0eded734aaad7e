//! [`ChatApis`]: a real HTTP server standing in for Slack's Web API and
//! Telegram's Bot API, speaking their documented shapes: `chat.postMessage`
//! and `chat.update` (bearer token, `{ok, channel, ts}`), a press's
//! `response_url`, and `sendMessage`, `editMessageText`,
//! `answerCallbackQuery` (`/bot<token>/<method>`, `{ok, result}`). It
//! records every call, and signs Slack's callbacks as Slack does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use hmac::{KeyInit as _, Mac as _};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

use crate::background::serve_in_background;

/// The bot token the fake Slack takes.
pub const SLACK_TOKEN: &str = "xoxb-test";
/// The app-level token the fake Slack opens Socket Mode connections for.
pub const SLACK_APP_TOKEN: &str = "xapp-test";
/// The bot token the fake Telegram takes.
pub const TELEGRAM_TOKEN: &str = "123:test";

/// One API call as it arrived.
#[derive(Debug, Clone)]
pub struct ApiCall {
    /// `chat.postMessage`, `sendMessage`, `response_url`, …
    pub method: String,
    /// Its JSON body.
    pub body: Value,
    /// The id the fake gave what it made (a Telegram `message_id`; a Slack
    /// `ts` ends with it).
    pub id: u64,
}

#[derive(Debug, Default)]
struct Log {
    calls: Vec<ApiCall>,
    next_id: u64,
}

/// Fake Slack and Telegram APIs on 127.0.0.1:0.
#[derive(Debug)]
pub struct ChatApis {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    arrived: Arc<Notify>,
    /// What `apps.connections.open` hands back (a [`crate::SlackSocket`]).
    socket_url: Arc<Mutex<Option<String>>>,
    _shutdown: oneshot::Sender<()>,
}

fn record(log: &Mutex<Log>, ring: &Notify, method: &str, body: Value) -> u64 {
    let mut log = log.lock().unwrap();
    log.next_id += 1;
    let id = log.next_id;
    log.calls.push(ApiCall {
        method: method.to_owned(),
        body,
        id,
    });
    drop(log);
    ring.notify_waiters();
    id
}

impl ChatApis {
    /// Starts both fakes.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start() -> Self {
        let log = Arc::new(Mutex::new(Log::default()));
        let arrived = Arc::new(Notify::new());
        let (l1, r1) = (log.clone(), arrived.clone());
        let (l2, r2) = (log.clone(), arrived.clone());
        let (l3, r3) = (log.clone(), arrived.clone());
        let socket_url = Arc::new(Mutex::new(None::<String>));
        let opens = socket_url.clone();
        let app = axum::Router::new()
            .route(
                "/api/{method}",
                axum::routing::post(
                    move |Path(method): Path<String>, headers: HeaderMap, body: axum::Json<Value>| {
                        let (log, ring, opens) = (l1.clone(), r1.clone(), opens.clone());
                        async move {
                            let bearer = headers.get("authorization").and_then(|v| v.to_str().ok());
                            if method == "apps.connections.open" {
                                // Socket Mode takes the app-level token only.
                                if bearer != Some(&format!("Bearer {SLACK_APP_TOKEN}")) {
                                    return axum::Json(json!({"ok": false, "error": "invalid_auth"}));
                                }
                                record(&log, &ring, &method, body.0);
                                let url = opens.lock().unwrap().clone();
                                return axum::Json(url.map_or_else(
                                    || json!({"ok": false, "error": "socket_mode_disabled"}),
                                    |url| json!({"ok": true, "url": url}),
                                ));
                            }
                            if headers.get("authorization").and_then(|v| v.to_str().ok())
                                != Some(&format!("Bearer {SLACK_TOKEN}"))
                            {
                                return axum::Json(json!({"ok": false, "error": "invalid_auth"}));
                            }
                            let channel = body.0["channel"].clone();
                            let id = record(&log, &ring, &method, body.0.clone());
                            let ts = body.0["ts"].as_str().map_or_else(|| format!("1700000000.{id:06}"), str::to_owned);
                            // Slack answers with the channel's id.
                            axum::Json(json!({"ok": true, "channel": if channel == "#ops" { json!("C0OPS") } else { channel }, "ts": ts}))
                        }
                    },
                ),
            )
            .route(
                "/slack-response",
                axum::routing::post(move |body: axum::Json<Value>| {
                    let (log, ring) = (l2.clone(), r2.clone());
                    async move {
                        record(&log, &ring, "response_url", body.0);
                        StatusCode::OK
                    }
                }),
            )
            .route(
                "/{bot}/{method}",
                axum::routing::post(
                    move |Path((bot, method)): Path<(String, String)>, body: axum::Json<Value>| {
                        let (log, ring) = (l3.clone(), r3.clone());
                        async move {
                            if bot != format!("bot{TELEGRAM_TOKEN}") {
                                return (StatusCode::UNAUTHORIZED, axum::Json(json!({"ok": false, "error_code": 401, "description": "Unauthorized"})));
                            }
                            let chat = body.0["chat_id"].clone();
                            let id = record(&log, &ring, &method, body.0);
                            let result = if method == "answerCallbackQuery" {
                                json!(true)
                            } else {
                                json!({"message_id": id, "chat": {"id": chat}, "date": 0})
                            };
                            (StatusCode::OK, axum::Json(json!({"ok": true, "result": result})))
                        }
                    },
                ),
            );
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            log,
            arrived,
            socket_url,
            _shutdown: shutdown,
        }
    }

    /// Slack's Web API base URL on it.
    #[must_use]
    pub fn slack_api(&self) -> String {
        format!("http://{}/api", self.addr)
    }

    /// Makes `apps.connections.open` hand back `url`.
    ///
    /// # Panics
    /// When a handler panicked.
    pub fn open_sockets_at(&self, url: String) {
        *self.socket_url.lock().unwrap() = Some(url);
    }

    /// A press's `response_url` on it.
    #[must_use]
    pub fn response_url(&self) -> String {
        format!("http://{}/slack-response", self.addr)
    }

    /// Telegram's Bot API base URL on it.
    #[must_use]
    pub fn telegram_api(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every call so far to `method`.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn calls(&self, method: &str) -> Vec<ApiCall> {
        let log = self.log.lock().unwrap();
        log.calls
            .iter()
            .filter(|c| c.method == method)
            .cloned()
            .collect()
    }

    /// Waits (at most 30 s) for a call to `method` that `matches`.
    ///
    /// # Panics
    /// When none comes in time.
    pub async fn wait_for(&self, method: &str, matches: impl Fn(&Value) -> bool) -> ApiCall {
        let found = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let notified = self.arrived.notified();
                if let Some(call) = self.calls(method).into_iter().find(|c| matches(&c.body)) {
                    return call;
                }
                notified.await;
            }
        })
        .await;
        found.unwrap_or_else(|_| {
            panic!(
                "no {method} call came: {:?}",
                self.log.lock().unwrap().calls
            )
        })
    }
}

impl ChatApis {
    /// Waits (at most 30 s) until `method` was called `n` times.
    ///
    /// # Panics
    /// When it was not in time.
    pub async fn wait_count(&self, method: &str, n: usize) {
        let counted = async {
            loop {
                let notified = self.arrived.notified();
                if self.calls(method).len() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), counted)
            .await
            .unwrap_or_else(|_| panic!("{method} was not called {n} times"));
    }
}

/// A Slack interaction request's form body and headers, signed with
/// `secret` at `at` (seconds), as Slack sends it.
#[must_use]
pub fn slack_signed(secret: &str, at: i64, payload: &Value) -> (String, String, String) {
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("v0:{at}:{body}").as_bytes());
    let signature = format!("v0={}", hex::encode(mac.finalize().into_bytes()));
    (body, at.to_string(), signature)
}
