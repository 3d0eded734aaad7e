//! [`SlackSocket`]: a real WebSocket server speaking Slack's Socket Mode
//! (issue 48 item 1), reached through [`crate::ChatApis`]'s
//! `apps.connections.open`. It greets each connection with `hello`, sends
//! envelopes (`interactive`, `events_api`, …) on the newest connection,
//! keeps each until its `{"envelope_id"}` acknowledgement comes and times
//! it against Slack's 3 s, delivers again (`retry_attempt` + 1) what a
//! connection that went away left unacknowledged, holds what comes while
//! no connection is open until one is, and can say `disconnect`, kill a
//! socket, or lose an acknowledgement with its socket.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};
use tokio_tungstenite::tungstenite::Message;

use crate::ChatApis;

/// How long Slack waits for an acknowledgement.
pub const ACK_DEADLINE: Duration = Duration::from_secs(3);

/// How long Slack keeps a connection it asked to refresh, at most.
const REFRESH_GRACE: Duration = Duration::from_secs(10);

/// An acknowledgement as it came.
#[derive(Debug, Clone)]
pub struct Ack {
    /// The envelope acknowledged.
    pub envelope_id: String,
    /// Since the envelope's last delivery.
    pub after: Duration,
    /// How often it had been delivered.
    pub deliveries: u32,
}

enum Command {
    Send(String),
    Close,
    Kill,
}

struct Connection {
    id: usize,
    commands: mpsc::UnboundedSender<Command>,
    /// Told to `disconnect` (refresh): nothing more is delivered on it.
    draining: bool,
}

struct Outstanding {
    envelope: Value,
    sent: Instant,
    on: Option<usize>,
    deliveries: u32,
}

#[derive(Default)]
struct State {
    opened: usize,
    live: Vec<Connection>,
    outstanding: BTreeMap<String, Outstanding>,
    next_envelope: u64,
    acks: Vec<Ack>,
    lose_next_ack: bool,
    /// A connection came while a draining one was still open.
    overlapped: bool,
    /// Close frames Clarify sent.
    closed_by_clarify: usize,
}

impl State {
    /// Sends `id` on the newest connection not draining, if any.
    fn deliver(&mut self, id: &str) {
        let Some(connection) = self.live.iter().rev().find(|c| !c.draining) else {
            return;
        };
        let Some(out) = self.outstanding.get_mut(id) else {
            return;
        };
        out.envelope["retry_attempt"] = json!(out.deliveries);
        out.envelope["retry_reason"] = json!(if out.deliveries > 0 { "timeout" } else { "" });
        let _ = connection
            .commands
            .send(Command::Send(out.envelope.to_string()));
        out.sent = Instant::now();
        out.on = Some(connection.id);
        out.deliveries += 1;
    }

    /// Delivers again what no open connection holds.
    fn redeliver(&mut self) {
        let live: Vec<usize> = self.live.iter().map(|c| c.id).collect();
        let stranded: Vec<String> = self
            .outstanding
            .iter()
            .filter(|(_, o)| o.on.is_none_or(|on| !live.contains(&on)))
            .map(|(id, _)| id.clone())
            .collect();
        for id in stranded {
            self.deliver(&id);
        }
    }
}

/// A Socket Mode endpoint on 127.0.0.1 (or another loopback address).
#[derive(Clone)]
pub struct SlackSocket {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    changed: Arc<Notify>,
}

impl SlackSocket {
    /// Starts one on 127.0.0.1 and makes `apis` hand it out.
    pub async fn start(apis: &ChatApis) -> Self {
        Self::start_on(apis, "127.0.0.1").await
    }

    /// Starts one on loopback address `ip` and makes `apis` hand it out.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start_on(apis: &ChatApis, ip: &str) -> Self {
        let listener = TcpListener::bind((ip, 0)).await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let socket = Self {
            addr,
            state: Arc::default(),
            changed: Arc::default(),
        };
        apis.open_sockets_at(format!("ws://{addr}/link/?ticket=t&app_id=A1"));
        let accepting = socket.clone();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                if let Ok(ws) = tokio_tungstenite::accept_async(tcp).await {
                    tokio::spawn(accepting.clone().serve(ws));
                }
            }
        });
        socket
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let found = f(&mut self.state.lock().unwrap());
        self.changed.notify_waiters();
        found
    }

    async fn serve(self, ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>) {
        let (mut sink, mut stream) = ws.split();
        let (commands, mut received) = mpsc::unbounded_channel();
        let hello = json!({"type": "hello", "num_connections": 1,
            "debug_info": {"host": "stand-in", "approximate_connection_time": 18060},
            "connection_info": {"app_id": "A1"}});
        if sink.send(Message::text(hello.to_string())).await.is_err() {
            return;
        }
        let id = self.with(|s| {
            s.opened += 1;
            let id = s.opened;
            s.overlapped |= s.live.iter().any(|c| c.draining);
            s.live.push(Connection {
                id,
                commands,
                draining: false,
            });
            s.redeliver();
            id
        });
        loop {
            tokio::select! {
                command = received.recv() => match command {
                    Some(Command::Send(text)) => {
                        if sink.send(Message::text(text)).await.is_err() {
                            break;
                        }
                    }
                    Some(Command::Close) => {
                        let _ = sink.send(Message::Close(None)).await;
                        break;
                    }
                    Some(Command::Kill) | None => break,
                },
                frame = stream.next() => match frame {
                    Some(Ok(Message::Text(text))) => {
                        if !self.acknowledged(id, &text) {
                            break;
                        }
                    }
                    Some(Ok(Message::Close(_))) => {
                        self.with(|s| s.closed_by_clarify += 1);
                        break;
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                },
            }
        }
        // Dropping both halves ends the TCP connection as it is.
        drop((sink, stream));
        self.with(|s| {
            s.live.retain(|c| c.id != id);
            s.redeliver();
        });
    }

    /// Takes an acknowledgement; false when it was to be lost with its
    /// connection.
    fn acknowledged(&self, _on: usize, text: &str) -> bool {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return true;
        };
        let Some(envelope_id) = value["envelope_id"].as_str() else {
            return true;
        };
        self.with(|s| {
            if std::mem::take(&mut s.lose_next_ack) {
                return false;
            }
            if let Some(out) = s.outstanding.remove(envelope_id) {
                s.acks.push(Ack {
                    envelope_id: envelope_id.to_owned(),
                    after: out.sent.elapsed(),
                    deliveries: out.deliveries,
                });
            }
            true
        })
    }

    /// Sends an envelope of `kind` carrying `payload`; its id.
    pub fn envelope(&self, kind: &str, payload: &Value) -> String {
        self.with(|s| {
            s.next_envelope += 1;
            let id = format!("env-{}", s.next_envelope);
            let envelope = json!({"envelope_id": id, "type": kind, "payload": payload,
                "accepts_response_payload": false, "retry_attempt": 0, "retry_reason": ""});
            s.outstanding.insert(
                id.clone(),
                Outstanding {
                    envelope,
                    sent: Instant::now(),
                    on: None,
                    deliveries: 0,
                },
            );
            s.deliver(&id);
            id
        })
    }

    /// Sends an interaction (`payload`, a `block_actions`) as Slack does.
    pub fn interaction(&self, payload: &Value) -> String {
        self.envelope("interactive", payload)
    }

    /// Says `disconnect` with `reason` on the newest connection; nothing more
    /// is delivered on it, and it is closed once a newer one opened (or
    /// after Slack's grace).
    pub fn disconnect(&self, reason: &str) {
        let old = self.with(|s| {
            let newest = s.live.iter_mut().rev().find(|c| !c.draining)?;
            newest.draining = true;
            let said = json!({"type": "disconnect", "reason": reason,
                "debug_info": {"host": "stand-in"}});
            let _ = newest.commands.send(Command::Send(said.to_string()));
            Some((newest.id, s.opened))
        });
        let Some((id, opened)) = old else {
            return;
        };
        let this = self.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(REFRESH_GRACE, this.wait(|s| s.opened > opened)).await;
            this.with(|s| {
                if let Some(c) = s.live.iter().find(|c| c.id == id) {
                    let _ = c.commands.send(Command::Close);
                }
            });
        });
    }

    /// Ends the newest connection's TCP stream without a word.
    pub fn kill(&self) {
        self.with(|s| {
            if let Some(c) = s.live.last() {
                let _ = c.commands.send(Command::Kill);
            }
        });
    }

    /// The next acknowledgement is lost: its connection dies as it comes.
    pub fn lose_next_ack(&self) {
        self.with(|s| s.lose_next_ack = true);
    }

    /// Waits (at most 30 s) until `done` holds.
    async fn wait(&self, done: impl Fn(&State) -> bool) {
        loop {
            let notified = self.changed.notified();
            if done(&self.state.lock().unwrap()) {
                return;
            }
            notified.await;
        }
    }

    async fn within<T>(&self, what: &str, until: impl Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(30), until)
            .await
            .unwrap_or_else(|_| panic!("Socket Mode stand-in: no {what} in time"))
    }

    /// Waits until `n` connections were opened in all.
    pub async fn opened(&self, n: usize) {
        self.within("connection", self.wait(|s| s.opened >= n))
            .await;
    }

    /// Waits until no connection is open.
    pub async fn all_closed(&self) {
        self.within("close", self.wait(|s| s.live.is_empty())).await;
    }

    /// Waits for envelope `id`'s acknowledgement.
    pub async fn acked(&self, id: &str) -> Ack {
        self.within(
            "ack",
            self.wait(|s| s.acks.iter().any(|a| a.envelope_id == id)),
        )
        .await;
        self.acks()
            .into_iter()
            .find(|a| a.envelope_id == id)
            .expect("acknowledged")
    }

    /// Every acknowledgement so far.
    #[must_use]
    pub fn acks(&self) -> Vec<Ack> {
        self.state.lock().unwrap().acks.clone()
    }

    /// Acknowledgements later than Slack's deadline, and envelopes left
    /// unacknowledged past it.
    #[must_use]
    pub fn late(&self) -> Vec<String> {
        let s = self.state.lock().unwrap();
        let late = s.acks.iter().filter(|a| a.after > ACK_DEADLINE);
        let waiting = s
            .outstanding
            .iter()
            .filter(|(_, o)| o.sent.elapsed() > ACK_DEADLINE);
        late.map(|a| a.envelope_id.clone())
            .chain(waiting.map(|(id, _)| id.clone()))
            .collect()
    }

    /// Connections opened in all, and open now.
    #[must_use]
    pub fn connections(&self) -> (usize, usize) {
        let s = self.state.lock().unwrap();
        (s.opened, s.live.len())
    }

    /// Whether a connection opened while one asked to refresh was open.
    #[must_use]
    pub fn overlapped(&self) -> bool {
        self.state.lock().unwrap().overlapped
    }

    /// Close frames Clarify sent.
    #[must_use]
    pub fn closed_by_clarify(&self) -> usize {
        self.state.lock().unwrap().closed_by_clarify
    }

    /// The address it listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}
