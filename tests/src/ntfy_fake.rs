//! [`NtfyFake`]: a real HTTP server speaking the part of ntfy's protocol
//! Clarify uses (issue 48 item 1). It takes a message published as JSON
//! (`POST /` naming its `topic`) or as plain text (`POST`/`PUT /<topic>`,
//! the body being the message: what an `http` action button sends), gives
//! each an id, keeps every topic's log, and serves a topic's JSON stream
//! (`GET /<topic>/json?since=<id|all>`): an `open` event, the kept
//! messages after `since`, then each new one as it comes, one JSON object
//! a line. It can refuse the next publishes, send a message again, and
//! drop every open stream.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio::sync::{Notify, broadcast, oneshot, watch};

use crate::background::serve_in_background;

/// One message a topic holds.
#[derive(Debug, Clone)]
pub struct Published {
    /// Its id (what `since=` takes).
    pub id: String,
    /// Its topic.
    pub topic: String,
    /// Its text.
    pub message: String,
    /// The JSON it was published as (`Value::Null` for plain text).
    pub json: Value,
    /// Its `Authorization` header; `""` when none.
    pub authorization: String,
    /// Its `Idempotency-Key` (Clarify's notices carry one).
    pub key: String,
    /// When it arrived (a benchmark's ask → notice latency).
    pub at: std::time::Instant,
}

/// One subscription as it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The topic.
    pub topic: String,
    /// Its `since=`.
    pub since: String,
    /// Its `Authorization` header; `""` when none.
    pub authorization: String,
}

#[derive(Debug, Default)]
struct Log {
    messages: Vec<Published>,
    refused: usize,
    refuse_next: usize,
    subscriptions: Vec<Subscription>,
}

#[derive(Debug)]
struct Shared {
    log: Mutex<Log>,
    arrived: Notify,
    live: broadcast::Sender<Published>,
    drops: watch::Sender<u64>,
}

/// An ntfy server on 127.0.0.1:0.
#[derive(Debug)]
pub struct NtfyFake {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _shutdown: oneshot::Sender<()>,
}

fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

impl Shared {
    /// Keeps a message (unless refusing) and tells the streams.
    fn publish(&self, topic: &str, message: String, json: Value, headers: &HeaderMap) -> Response {
        let mut log = self.log.lock().unwrap();
        if log.refuse_next > 0 {
            log.refuse_next -= 1;
            log.refused += 1;
            drop(log);
            self.arrived.notify_waiters();
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        let published = Published {
            id: format!("m{:011}", log.messages.len() + 1),
            topic: topic.to_owned(),
            message,
            json,
            authorization: header(headers, "authorization"),
            key: header(headers, "idempotency-key"),
            at: std::time::Instant::now(),
        };
        log.messages.push(published.clone());
        drop(log);
        let _ = self.live.send(published.clone());
        self.arrived.notify_waiters();
        axum::Json(line(&published)).into_response()
    }
}

/// A message as ntfy's stream and its publish answer show it.
fn line(m: &Published) -> Value {
    json!({"id": m.id, "time": 1, "event": "message", "topic": m.topic, "message": m.message})
}

fn valid_topic(topic: &str) -> bool {
    !topic.is_empty()
        && topic.len() <= 64
        && topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
}

impl NtfyFake {
    /// A server that refuses (500) the first `refuse_first` publishes.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start(refuse_first: usize) -> Self {
        let shared = Arc::new(Shared {
            log: Mutex::new(Log {
                refuse_next: refuse_first,
                ..Log::default()
            }),
            arrived: Notify::new(),
            live: broadcast::channel(256).0,
            drops: watch::channel(0).0,
        });
        let (root, plain, stream) = (shared.clone(), shared.clone(), shared.clone());
        let app = axum::Router::new()
            .route(
                "/",
                post(move |headers: HeaderMap, body: axum::Json<Value>| {
                    let shared = root.clone();
                    async move {
                        let Some(topic) = body.0.get("topic").and_then(Value::as_str) else {
                            return (StatusCode::BAD_REQUEST, "topic missing").into_response();
                        };
                        let message = body.0["message"].as_str().unwrap_or_default().to_owned();
                        shared.publish(topic, message, body.0.clone(), &headers)
                    }
                }),
            )
            .route(
                "/{topic}",
                post({
                    let shared = plain.clone();
                    move |Path(topic): Path<String>, headers: HeaderMap, body: Bytes| {
                        let shared = shared.clone();
                        async move { publish_plain(&shared, &topic, &headers, &body) }
                    }
                })
                .put(
                    move |Path(topic): Path<String>, headers: HeaderMap, body: Bytes| {
                        let shared = plain.clone();
                        async move { publish_plain(&shared, &topic, &headers, &body) }
                    },
                ),
            )
            .route(
                "/{topic}/json",
                get(
                    move |Path(topic): Path<String>,
                          Query(query): Query<std::collections::HashMap<String, String>>,
                          headers: HeaderMap| {
                        let shared = stream.clone();
                        async move { subscribe(&shared, topic, &query, &headers) }
                    },
                ),
            );
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            shared,
            _shutdown: shutdown,
        }
    }

    /// The URL of topic `topic` on it.
    #[must_use]
    pub fn topic_url(&self, topic: &str) -> String {
        format!("http://{}/{topic}", self.addr)
    }

    /// Every message kept so far, on every topic, in order.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn messages(&self) -> Vec<Published> {
        self.shared.log.lock().unwrap().messages.clone()
    }

    /// The messages on `topic` so far.
    #[must_use]
    pub fn on(&self, topic: &str) -> Vec<Published> {
        let all = self.messages();
        all.into_iter().filter(|m| m.topic == topic).collect()
    }

    /// The publishes refused so far.
    #[must_use]
    pub fn refused(&self) -> usize {
        self.shared.log.lock().unwrap().refused
    }

    /// Every subscription asked for so far, in order.
    #[must_use]
    pub fn subscriptions(&self) -> Vec<Subscription> {
        self.shared.log.lock().unwrap().subscriptions.clone()
    }

    /// Sends the kept message `id` again to every open stream, with its
    /// own id (as a faulty or hostile peer might).
    ///
    /// # Panics
    /// When no message has that id.
    pub fn resend(&self, id: &str) {
        let all = self.messages();
        let message = all
            .into_iter()
            .find(|m| m.id == id)
            .expect("a kept message");
        let _ = self.shared.live.send(message);
    }

    /// Ends every open stream (as a network drop would).
    pub fn drop_streams(&self) {
        self.shared.drops.send_modify(|n| *n += 1);
    }

    /// Waits (at most `limit`) until `done` holds of the messages and
    /// subscriptions.
    ///
    /// # Panics
    /// When it does not in time, with what arrived.
    pub async fn wait_until(
        &self,
        limit: Duration,
        done: impl Fn(&[Published], &[Subscription]) -> bool,
    ) {
        let waited = tokio::time::timeout(limit, async {
            loop {
                let notified = self.shared.arrived.notified();
                {
                    let log = self.shared.log.lock().unwrap();
                    if done(&log.messages, &log.subscriptions) {
                        return;
                    }
                }
                notified.await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "not seen in {limit:?}; got {:#?}",
            self.shared.log.lock().unwrap()
        );
    }

    /// Waits until a message with idempotency key `key` is kept; returns
    /// the JSON it was published as.
    ///
    /// # Panics
    /// As [`NtfyFake::wait_until`].
    pub async fn accepted(&self, key: &str) -> Value {
        self.wait_until(Duration::from_secs(30), |m, _| {
            m.iter().any(|m| m.key == key)
        })
        .await;
        let all = self.messages();
        all.into_iter().find(|m| m.key == key).unwrap().json
    }
}

fn publish_plain(shared: &Shared, topic: &str, headers: &HeaderMap, body: &[u8]) -> Response {
    if !valid_topic(topic) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let message = String::from_utf8_lossy(body).into_owned();
    shared.publish(topic, message, Value::Null, headers)
}

/// A topic's JSON stream: `open`, what was kept after `since`, then what
/// comes, until the streams are dropped.
fn subscribe(
    shared: &Arc<Shared>,
    topic: String,
    query: &std::collections::HashMap<String, String>,
    headers: &HeaderMap,
) -> Response {
    if !valid_topic(&topic) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let since = query.get("since").cloned().unwrap_or_default();
    // Subscribed before the backlog is read: nothing falls in between.
    let live = shared.live.subscribe();
    let mut drops = shared.drops.subscribe();
    drops.mark_unchanged();
    let backlog: Vec<Published> = {
        let mut log = shared.log.lock().unwrap();
        log.subscriptions.push(Subscription {
            topic: topic.clone(),
            since: since.clone(),
            authorization: header(headers, "authorization"),
        });
        let on_topic = log.messages.iter().filter(|m| m.topic == topic);
        let after = match on_topic.clone().position(|m| m.id == since) {
            Some(at) => at + 1,
            // `all`, or an id it does not know: everything kept.
            None if since == "all" || !since.is_empty() => 0,
            None => usize::MAX,
        };
        on_topic.skip(after).cloned().collect()
    };
    shared.arrived.notify_waiters();
    let backlog_ids: Vec<String> = backlog.iter().map(|m| m.id.clone()).collect();
    let open = json!({"id": "open0", "time": 1, "event": "open", "topic": topic});
    let head = std::iter::once(open)
        .chain(backlog.iter().map(line))
        .map(|v| Ok::<_, std::convert::Infallible>(Bytes::from(format!("{v}\n"))))
        .collect::<Vec<_>>();
    let tail = futures_util::stream::unfold(
        (live, drops, topic, backlog_ids),
        |(mut live, mut drops, topic, seen)| async move {
            loop {
                tokio::select! {
                    _ = drops.changed() => return None,
                    next = live.recv() => match next {
                        Ok(m) if m.topic == topic && !seen.contains(&m.id) => {
                            let bytes = Bytes::from(format!("{}\n", line(&m)));
                            return Some((Ok(bytes), (live, drops, topic, seen)));
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => return None,
                    },
                }
            }
        },
    );
    let body = futures_util::stream::iter(head).chain(tail);
    Response::builder()
        .header("content-type", "application/x-ndjson; charset=utf-8")
        .body(Body::from_stream(body))
        .unwrap()
}
