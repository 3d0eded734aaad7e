//! [`DiscordFake`]: a stand-in for Discord on 127.0.0.1 speaking its
//! documented shapes. REST (`/api/v10`, `Authorization: Bot <token>`):
//! `GET /gateway/bot`, `POST /channels/{id}/messages`, `PATCH
//! /channels/{id}/messages/{id}`, `POST /interactions/{id}/{token}/callback`
//! (204), each recorded. The Gateway, a real WebSocket: hello (op 10),
//! identify (op 2) answered with READY (its `session_id` and
//! `resume_gateway_url`), heartbeats (op 1) acknowledged (op 11) unless
//! the test withholds it, resume (op 6) answered with the dispatches
//! missed and RESUMED, and `INTERACTION_CREATE` sent when a test presses.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, oneshot};

use crate::background::serve_in_background;

/// The bot token the fake Discord takes.
pub const DISCORD_TOKEN: &str = "discord-bot-token";

/// The session READY names.
pub const DISCORD_SESSION: &str = "session-1";

/// One thing that arrived: a REST call (`POST /channels/…`, …) or a
/// gateway payload (`gateway /gateway`, `gateway /resume`).
#[derive(Debug, Clone)]
pub struct DiscordCall {
    /// `GET`, `POST`, `PATCH`, or `gateway`.
    pub method: String,
    /// The path (REST), or the path the socket was opened at.
    pub path: String,
    /// The JSON body or payload.
    pub body: Value,
    /// Its number among all calls; a message posted by it has the id
    /// `900 + id`.
    pub id: u64,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) calls: Vec<DiscordCall>,
    pub(crate) next_id: u64,
    /// Every dispatch sent, by sequence number, for a resume to replay.
    pub(crate) dispatches: Vec<Value>,
    pub(crate) withhold_acks: bool,
    /// Gateway connections opened so far.
    pub(crate) connections: u32,
}

/// The fake, REST and Gateway.
#[derive(Debug)]
pub struct DiscordFake {
    addr: SocketAddr,
    gateway: SocketAddr,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
    _shutdown: oneshot::Sender<()>,
}

pub(crate) fn record(
    state: &Mutex<State>,
    ring: &Notify,
    method: &str,
    path: String,
    body: Value,
) -> u64 {
    let mut s = state.lock().unwrap();
    s.next_id += 1;
    let id = s.next_id;
    s.calls.push(DiscordCall {
        method: method.to_owned(),
        path,
        body,
        id,
    });
    drop(s);
    ring.notify_waiters();
    id
}

fn authorized(headers: &HeaderMap) -> bool {
    headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some(&format!("Bot {DISCORD_TOKEN}"))
}

impl DiscordFake {
    /// Starts the fake, its gateway asking for a heartbeat every
    /// `heartbeat`.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start(heartbeat: Duration) -> Self {
        let state = Arc::new(Mutex::new(State::default()));
        let arrived = Arc::new(Notify::new());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway = listener.local_addr().unwrap();
        let (s0, r0) = (state.clone(), arrived.clone());
        let (s1, r1) = (state.clone(), arrived.clone());
        let (s2, r2) = (state.clone(), arrived.clone());
        let (s3, r3) = (state.clone(), arrived.clone());
        let app = axum::Router::new()
            .route(
                "/api/v10/gateway/bot",
                axum::routing::get(move |headers: HeaderMap| {
                    let (state, ring) = (s0.clone(), r0.clone());
                    async move {
                        if !authorized(&headers) {
                            return (StatusCode::UNAUTHORIZED, axum::Json(json!({"code": 0})));
                        }
                        record(&state, &ring, "GET", "/gateway/bot".into(), Value::Null);
                        (
                            StatusCode::OK,
                            axum::Json(json!({"url": format!("ws://{gateway}/gateway"),
                            "shards": 1, "session_start_limit": {"total": 1000, "remaining": 999,
                            "reset_after": 0, "max_concurrency": 1}})),
                        )
                    }
                }),
            )
            .route(
                "/api/v10/channels/{channel}/messages",
                axum::routing::post(
                    move |Path(channel): Path<String>,
                          headers: HeaderMap,
                          body: axum::Json<Value>| {
                        let (state, ring) = (s1.clone(), r1.clone());
                        async move {
                            if !authorized(&headers) {
                                return (StatusCode::UNAUTHORIZED, axum::Json(json!({"code": 0})));
                            }
                            let path = format!("/channels/{channel}/messages");
                            let id = record(&state, &ring, "POST", path, body.0.clone());
                            let mut message = body.0;
                            message["id"] = json!(format!("{}", 900 + id));
                            message["channel_id"] = json!(channel);
                            (StatusCode::OK, axum::Json(message))
                        }
                    },
                ),
            )
            .route(
                "/api/v10/channels/{channel}/messages/{message}",
                axum::routing::patch(
                    move |Path((channel, message)): Path<(String, String)>,
                          headers: HeaderMap,
                          body: axum::Json<Value>| {
                        let (state, ring) = (s2.clone(), r2.clone());
                        async move {
                            if !authorized(&headers) {
                                return (StatusCode::UNAUTHORIZED, axum::Json(json!({"code": 0})));
                            }
                            let path = format!("/channels/{channel}/messages/{message}");
                            record(&state, &ring, "PATCH", path, body.0.clone());
                            let mut edited = body.0;
                            edited["id"] = json!(message);
                            edited["channel_id"] = json!(channel);
                            (StatusCode::OK, axum::Json(edited))
                        }
                    },
                ),
            )
            .route(
                "/api/v10/interactions/{id}/{token}/callback",
                axum::routing::post(
                    move |Path((id, token)): Path<(String, String)>, body: axum::Json<Value>| {
                        let (state, ring) = (s3.clone(), r3.clone());
                        async move {
                            let path = format!("/interactions/{id}/{token}/callback");
                            record(&state, &ring, "POST", path, body.0);
                            StatusCode::NO_CONTENT
                        }
                    },
                ),
            );
        let (addr, shutdown) = serve_in_background(app).await;
        let (s4, r4) = (state.clone(), arrived.clone());
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(super::discord_gateway::connection(
                    tcp,
                    gateway,
                    heartbeat,
                    s4.clone(),
                    r4.clone(),
                ));
            }
        });
        Self {
            addr,
            gateway,
            state,
            arrived,
            _shutdown: shutdown,
        }
    }

    /// The REST API's base URL (`--discord-api-url`).
    #[must_use]
    pub fn api_url(&self) -> String {
        format!("http://{}/api/v10", self.addr)
    }

    /// The REST API's socket.
    #[must_use]
    pub fn api_socket(&self) -> SocketAddr {
        self.addr
    }

    /// The gateway's socket.
    #[must_use]
    pub fn gateway_socket(&self) -> SocketAddr {
        self.gateway
    }

    /// Gateway connections opened so far.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn connections(&self) -> u32 {
        self.state.lock().unwrap().connections
    }

    /// Every call so far whose method and path start as given.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn calls(&self, method: &str, path: &str) -> Vec<DiscordCall> {
        let s = self.state.lock().unwrap();
        s.calls
            .iter()
            .filter(|c| c.method == method && c.path.starts_with(path))
            .cloned()
            .collect()
    }

    /// Every call so far, in order.
    ///
    /// # Panics
    /// When a handler panicked.
    #[must_use]
    pub fn all_calls(&self) -> Vec<DiscordCall> {
        self.state.lock().unwrap().calls.clone()
    }

    /// Waits (at most 30 s) for a call whose method and path start as
    /// given and that `matches`.
    ///
    /// # Panics
    /// When none comes in time.
    pub async fn wait_for(
        &self,
        method: &str,
        path: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> DiscordCall {
        let found = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let notified = self.arrived.notified();
                if let Some(call) = self
                    .calls(method, path)
                    .into_iter()
                    .find(|c| matches(&c.body))
                {
                    return call;
                }
                notified.await;
            }
        })
        .await;
        found.unwrap_or_else(|_| {
            panic!(
                "no {method} {path} came: {:?}",
                self.state.lock().unwrap().calls
            )
        })
    }

    /// Stops (or starts again) acknowledging heartbeats.
    ///
    /// # Panics
    /// When a handler panicked.
    pub fn withhold_acks(&self, withhold: bool) {
        self.state.lock().unwrap().withhold_acks = withhold;
    }

    /// `user` presses the button `custom_id` on message `message_id`
    /// (whose text was `content`): an `INTERACTION_CREATE` dispatched on
    /// the gateway. Returns the interaction's callback path.
    ///
    /// # Panics
    /// When a handler panicked.
    pub fn press(&self, user: &str, custom_id: &str, message_id: &str, content: &str) -> String {
        let mut s = self.state.lock().unwrap();
        let seq = s.dispatches.len() as u64 + 1;
        let id = format!("7{seq:04}");
        let token = format!("interaction-token-{seq}");
        s.dispatches
            .push(json!({"op": 0, "t": "INTERACTION_CREATE", "s": seq, "d": {
            "id": id, "application_id": "1", "type": 3, "token": token, "version": 1,
            "channel_id": "42", "guild_id": "4",
            "data": {"custom_id": custom_id, "component_type": 2},
            "member": {"user": {"id": format!("{}", 100 + seq), "username": user}},
            "message": {"id": message_id, "channel_id": "42", "content": content}}}));
        drop(s);
        self.arrived.notify_waiters();
        format!("/interactions/{id}/{token}/callback")
    }
}
