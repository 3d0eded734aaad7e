//! [`NoticeSink`]: a real HTTP server standing in for an operator's
//! notification webhook (a Slack incoming webhook, say). It records every
//! POST with its `Idempotency-Key`, refuses the first few if told to, and
//! keeps each key's notice once, as a receiver honouring the key would.
//! Its root (`POST /`) stands in for an ntfy server taking a message
//! published as JSON: the body must name its `topic`, and the answer is
//! the message as ntfy echoes it.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};

use crate::background::serve_in_background;

/// One POST as it arrived.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Its `Idempotency-Key`.
    pub key: String,
    /// Its body.
    pub body: Value,
    /// Whether the sink accepted it (2xx).
    pub accepted: bool,
    /// Its `Authorization` header; `""` when none.
    pub authorization: String,
    /// The path it was sent to.
    pub path: String,
    /// When it arrived (a benchmark's ask → notice latency).
    pub at: std::time::Instant,
}

#[derive(Debug, Default)]
struct Log {
    deliveries: Vec<Delivery>,
    refuse_next: usize,
    /// The body kept per key: the first accepted one.
    kept: HashMap<String, Value>,
}

/// A notification receiver on 127.0.0.1:0.
#[derive(Debug)]
pub struct NoticeSink {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    arrived: Arc<Notify>,
    _shutdown: oneshot::Sender<()>,
}

/// Logs one POST; refuses it (500) while refusals are left.
fn record(
    log: &Mutex<Log>,
    ring: &Notify,
    path: &str,
    headers: &HeaderMap,
    body: Value,
) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let key = header("idempotency-key");
    let mut log = log.lock().unwrap();
    let accepted = if log.refuse_next > 0 {
        log.refuse_next -= 1;
        false
    } else {
        log.kept.entry(key.clone()).or_insert_with(|| body.clone());
        true
    };
    log.deliveries.push(Delivery {
        key,
        body,
        accepted,
        authorization: header("authorization"),
        path: path.to_owned(),
        at: std::time::Instant::now(),
    });
    drop(log);
    ring.notify_waiters();
    if accepted {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    }
}

impl NoticeSink {
    /// A sink that refuses (500) the first `refuse_first` POSTs it gets,
    /// then accepts.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start(refuse_first: usize) -> Self {
        let log = Arc::new(Mutex::new(Log {
            refuse_next: refuse_first,
            ..Log::default()
        }));
        let arrived = Arc::new(Notify::new());
        let (sink, ring) = (log.clone(), arrived.clone());
        let app = axum::Router::new().route(
            "/{*path}",
            axum::routing::post(
                move |uri: axum::http::Uri, headers: HeaderMap, body: axum::Json<Value>| {
                    let (sink, ring) = (sink.clone(), ring.clone());
                    async move { record(&sink, &ring, uri.path(), &headers, body.0) }
                },
            ),
        );
        let (sink, ring) = (log.clone(), arrived.clone());
        let app = app.route(
            "/",
            axum::routing::post(move |headers: HeaderMap, body: axum::Json<Value>| {
                let (sink, ring) = (sink.clone(), ring.clone());
                async move {
                    // ntfy: a message published as JSON names its topic.
                    let Some(topic) = body.0.get("topic").and_then(Value::as_str) else {
                        return (StatusCode::BAD_REQUEST, axum::Json(serde_json::json!({"code": 40001, "error": "invalid request: topic missing"})));
                    };
                    let echo = serde_json::json!({"id": "m1", "time": 0, "event": "message", "topic": topic});
                    let status = record(&sink, &ring, "/", &headers, body.0);
                    (status, axum::Json(echo))
                }
            }),
        );
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            log,
            arrived,
            _shutdown: shutdown,
        }
    }

    /// Its URL.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The URL of the ntfy topic `topic` on it (published to at its root).
    #[must_use]
    pub fn ntfy_topic(&self, topic: &str) -> String {
        format!("http://{}/{topic}", self.addr)
    }

    /// Every POST so far, in arrival order.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.log.lock().unwrap().deliveries.clone()
    }

    /// POSTs with `key` so far: (all, accepted).
    #[must_use]
    pub fn count(&self, key: &str) -> (usize, usize) {
        let all = self.deliveries();
        let with_key = all.iter().filter(|d| d.key == key);
        let accepted = with_key.clone().filter(|d| d.accepted).count();
        (with_key.count(), accepted)
    }

    /// Waits (at most `limit`) until the deliveries satisfy `done`.
    ///
    /// # Panics
    /// When they do not in time, with what arrived.
    pub async fn wait_until(&self, limit: Duration, done: impl Fn(&[Delivery]) -> bool) {
        let waited = tokio::time::timeout(limit, async {
            loop {
                let notified = self.arrived.notified();
                if done(&self.deliveries()) {
                    return;
                }
                notified.await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "not delivered in {limit:?}; got {:#?}",
            self.deliveries()
        );
    }

    /// Waits until a notice with `key` has been accepted; returns its body.
    ///
    /// # Panics
    /// As [`NoticeSink::wait_until`].
    pub async fn accepted(&self, key: &str) -> Value {
        self.wait_until(Duration::from_secs(30), |all| {
            all.iter().any(|d| d.key == key && d.accepted)
        })
        .await;
        self.log.lock().unwrap().kept[key].clone()
    }
}

/// Every key a notice always carries (the pending stream's events and the
/// webhooks' bodies alike), present in `notice`.
///
/// # Panics
/// When one is missing.
pub fn assert_notice_keys(notice: &Value) {
    for key in [
        "event",
        "text",
        "pending_id",
        "task_id",
        "task",
        "session_id",
        "questions",
        "url",
        "answered_by",
        "expires_at",
        "actions",
    ] {
        assert!(notice.get(key).is_some(), "{key} always present: {notice}");
    }
}
