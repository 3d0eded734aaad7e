//! Discord's Gateway (issue 48 item 1): the WebSocket a bot opens to
//! hear presses (`INTERACTION_CREATE`) with no inbound port. `GET
//! /gateway/bot` names the URL; the hello (op 10) sets the heartbeat;
//! identify (op 2) asks for no intents (interactions need none); READY
//! gives the session to resume (op 6, at its `resume_gateway_url`, with
//! the last sequence number `s`) after a drop, a missed heartbeat ACK or
//! a reconnect request (op 7); an invalid session (op 9) that cannot be
//! resumed is identified afresh.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::CancellationToken;

use super::DiscordBot;
use super::connect::{Socket, open};
use super::heartbeat::{Due, Heartbeat};
use super::press::Presses;
use crate::resume::Webhooks;

/// How long the hello may take once connected.
const HELLO_TIMEOUT: Duration = Duration::from_secs(20);

/// What one connection leaves for the next: the session to resume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// READY's `session_id`.
    pub session_id: String,
    /// The last dispatch's sequence number.
    pub seq: Option<u64>,
    /// READY's `resume_gateway_url`.
    pub resume_url: String,
}

impl Session {
    /// The session kept as a lease's cursor, if it reads as one.
    #[must_use]
    pub fn from_cursor(cursor: Option<&str>) -> Option<Self> {
        cursor.and_then(|c| serde_json::from_str(c).ok())
    }

    /// This session as a lease's cursor.
    #[must_use]
    pub fn to_cursor(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// How a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Shut down (or the lease lost): nothing to retry.
    Stopped,
    /// Dropped after it was up: connect again at once, resuming.
    Dropped(String),
    /// It never came up, or Discord refused it: back off first.
    Failed(String),
    /// Discord will never take this bot (a bad token, intents refused).
    Fatal(String),
}

/// Where a connection's progress is told: up, and the session to keep.
pub trait Progress: Send {
    /// The connection is up (READY or RESUMED).
    fn up(&mut self);
    /// `session` changed (a new one, or a later sequence number): keep it;
    /// false when it may no longer be kept (the lease was lost).
    fn keep(&mut self, session: &Session) -> impl Future<Output = bool> + Send;
}

/// The gateway of one bot.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub(super) bot: DiscordBot,
    pub(super) webhooks: Webhooks,
    pub(super) presses: Presses,
}

impl Gateway {
    /// `bot`'s gateway, through `webhooks`' client and policy, answering
    /// presses with `presses`.
    #[must_use]
    pub fn new(bot: DiscordBot, webhooks: Webhooks, presses: Presses) -> Self {
        Self {
            bot,
            webhooks,
            presses,
        }
    }

    /// The URL `GET /gateway/bot` names.
    async fn url(&self) -> Result<String, String> {
        let auth = self.bot.authorization();
        let answer = self
            .webhooks
            .request(
                reqwest::Method::GET,
                &self.bot.url("/gateway/bot"),
                None,
                &[("authorization", auth.as_str())],
                "Discord's GET /gateway/bot",
            )
            .await
            .map_err(|_| "GET /gateway/bot failed".to_owned())?;
        answer["url"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "GET /gateway/bot named no url".to_owned())
    }

    /// One connection, resuming `session` if there is one, until it ends;
    /// `session` is what the next connection resumes.
    pub async fn connect(
        &self,
        session: &mut Option<Session>,
        progress: &mut impl Progress,
        shutdown: &CancellationToken,
    ) -> Ended {
        let url = match session.as_ref() {
            Some(s) if !s.resume_url.is_empty() => s.resume_url.clone(),
            _ => match self.url().await {
                Ok(url) => url,
                Err(why) => return Ended::Failed(why),
            },
        };
        let mut socket = match open(self.webhooks.networks(), &url).await {
            Ok(socket) => socket,
            Err(why) => {
                // A resume URL that cannot be reached: the next try
                // resumes at the URL `GET /gateway/bot` names.
                if let Some(s) = session.as_mut() {
                    s.resume_url.clear();
                }
                return Ended::Failed(why);
            }
        };
        let interval = match hello(&mut socket).await {
            Ok(interval) => interval,
            Err(why) => return Ended::Failed(why),
        };
        let token = self.bot.bot_token.0.as_str();
        let opening = match session.as_ref() {
            Some(s) => {
                json!({"op": 6, "d": {"token": token, "session_id": s.session_id, "seq": s.seq}})
            }
            None => json!({"op": 2, "d": {"token": token, "intents": 0,
                "properties": {"os": std::env::consts::OS, "browser": "clarify", "device": "clarify"}}}),
        };
        if send(&mut socket, &opening).await.is_err() {
            return Ended::Failed("the gateway closed before identify".to_owned());
        }
        let mut beat = Heartbeat::new(interval);
        let mut was_up = false;
        let ended = loop {
            let seq = session.as_ref().and_then(|s| s.seq);
            tokio::select! {
                () = shutdown.cancelled() => break Ended::Stopped,
                () = tokio::time::sleep_until(beat.next()) => {
                    if beat.due() == Due::Zombie {
                        break Ended::Dropped("no heartbeat ACK".to_owned());
                    }
                    if send(&mut socket, &json!({"op": 1, "d": seq})).await.is_err() {
                        break Ended::Dropped("the heartbeat could not be sent".to_owned());
                    }
                }
                read = socket.next() => {
                    let payload = match read {
                        Some(Ok(Message::Text(text))) => match serde_json::from_str::<Value>(&text) {
                            Ok(payload) => payload,
                            Err(_) => continue,
                        },
                        Some(Ok(Message::Close(frame))) => break closed(frame.as_ref()),
                        Some(Ok(_)) => continue,
                        Some(Err(e)) => break Ended::Dropped(format!("the gateway failed: {e}")),
                        None => break Ended::Dropped("the gateway closed".to_owned()),
                    };
                    match payload["op"].as_u64() {
                        Some(0) => {
                            if let Some(ended) = self
                                .dispatch(&payload, session, progress, &mut was_up)
                                .await
                            {
                                break ended;
                            }
                        }
                        Some(1) => {
                            beat.sent_early();
                            let _ = send(&mut socket, &json!({"op": 1, "d": seq})).await;
                        }
                        Some(7) => break Ended::Dropped("Discord asked to reconnect".to_owned()),
                        Some(9) => {
                            if payload["d"] != true {
                                *session = None;
                            }
                            break Ended::Failed("Discord invalidated the session".to_owned());
                        }
                        Some(11) => beat.acked(),
                        _ => {}
                    }
                }
            }
        };
        // Any code but 1000 and 1001 keeps the session resumable: after a
        // stop too, so the replica (or restart) that takes the lease over
        // resumes it, and a press made meanwhile is replayed, not lost.
        let _ = socket
            .close(Some(CloseFrame {
                code: CloseCode::from(4000),
                reason: "".into(),
            }))
            .await;
        if matches!(ended, Ended::Dropped(_)) && !was_up {
            // Down before it was ever up: not a connection to resume at
            // once, but a try that failed.
            return Ended::Failed("the gateway dropped before READY".to_owned());
        }
        ended
    }

    /// A dispatch (op 0): its sequence number kept, READY's session kept,
    /// a press answered before its number is.
    async fn dispatch(
        &self,
        payload: &Value,
        session: &mut Option<Session>,
        progress: &mut impl Progress,
        was_up: &mut bool,
    ) -> Option<Ended> {
        let seq = payload["s"].as_u64();
        let d = &payload["d"];
        match payload["t"].as_str().unwrap_or_default() {
            "READY" => {
                *session = Some(Session {
                    session_id: d["session_id"].as_str().unwrap_or_default().to_owned(),
                    seq,
                    resume_url: d["resume_gateway_url"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                });
                *was_up = true;
                progress.up();
            }
            "RESUMED" => {
                *was_up = true;
                progress.up();
            }
            "INTERACTION_CREATE" => self.presses.answer(d).await,
            _ => {}
        }
        if let (Some(s), Some(seq)) = (session.as_mut(), seq) {
            s.seq = Some(seq.max(s.seq.unwrap_or(0)));
        }
        match session.as_ref() {
            Some(s) if !progress.keep(s).await => Some(Ended::Stopped),
            _ => None,
        }
    }
}

/// The hello's `heartbeat_interval`.
async fn hello(socket: &mut Socket) -> Result<Duration, String> {
    let first = tokio::time::timeout(HELLO_TIMEOUT, socket.next())
        .await
        .map_err(|_| "no hello from the gateway".to_owned())?;
    let Some(Ok(Message::Text(text))) = first else {
        return Err("the gateway closed before its hello".to_owned());
    };
    let hello: Value = serde_json::from_str(&text).map_err(|_| "a hello not JSON".to_owned())?;
    match (
        hello["op"].as_u64(),
        hello["d"]["heartbeat_interval"].as_u64(),
    ) {
        (Some(10), Some(ms)) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err("the gateway's first message was no hello".to_owned()),
    }
}

async fn send(socket: &mut Socket, payload: &Value) -> Result<(), ()> {
    socket
        .send(Message::text(payload.to_string()))
        .await
        .map_err(|_| ())
}

/// How a close from Discord ends the connection: the codes Discord
/// documents as not to reconnect with are fatal.
fn closed(frame: Option<&CloseFrame>) -> Ended {
    let code = frame.map_or(1005, |f| u16::from(f.code));
    match code {
        4004 => Ended::Fatal("Discord refused the bot token (4004)".to_owned()),
        4010..=4014 => Ended::Fatal(format!("Discord closed the gateway for good ({code})")),
        _ => Ended::Dropped(format!("the gateway closed ({code})")),
    }
}
