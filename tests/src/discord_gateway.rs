//! The gateway half of [`super::DiscordFake`]: one WebSocket connection
//! as Discord runs it (hello, READY after identify, heartbeat ACKs unless
//! withheld, the missed dispatches and RESUMED after a resume, a close
//! with 4004 for a wrong token).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

use super::discord_fake::{DISCORD_SESSION, DISCORD_TOKEN, State, record};

/// One gateway connection, as Discord runs it.
pub(crate) async fn connection(
    tcp: tokio::net::TcpStream,
    gateway: SocketAddr,
    heartbeat: Duration,
    state: Arc<Mutex<State>>,
    ring: Arc<Notify>,
) {
    let path = Arc::new(Mutex::new(String::new()));
    let seen = path.clone();
    // tungstenite's signature: its error is a whole HTTP response.
    #[allow(clippy::result_large_err)]
    let callback = move |request: &Request, response: Response| {
        *seen.lock().unwrap() = request.uri().path().to_owned();
        Ok(response)
    };
    let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(tcp, callback).await else {
        return;
    };
    let path = format!("gateway {}", path.lock().unwrap());
    state.lock().unwrap().connections += 1;
    let hello = json!({"op": 10, "d": {"heartbeat_interval": heartbeat.as_millis()}});
    if socket.send(Message::text(hello.to_string())).await.is_err() {
        return;
    }
    // The dispatches this connection has sent up to; none before its
    // session is identified or resumed.
    let mut sent: Option<usize> = None;
    loop {
        let notified = ring.notified();
        let due: Vec<Value> = sent.map_or_else(Vec::new, |from| {
            state.lock().unwrap().dispatches[from..].to_vec()
        });
        if let Some(from) = sent.as_mut() {
            *from += due.len();
        }
        for dispatch in due {
            if socket
                .send(Message::text(dispatch.to_string()))
                .await
                .is_err()
            {
                return;
            }
        }
        let read = tokio::select! {
            () = notified => continue,
            read = socket.next() => read,
        };
        let Some(Ok(Message::Text(text))) = read else {
            return;
        };
        let Ok(payload) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        record(&state, &ring, "gateway", path.clone(), payload.clone());
        let withhold = state.lock().unwrap().withhold_acks;
        let answer = match payload["op"].as_u64() {
            Some(1) if !withhold => Some(json!({"op": 11})),
            Some(2) if payload["d"]["token"] == DISCORD_TOKEN => {
                let mut s = state.lock().unwrap();
                let seq = s.dispatches.len() + 1;
                let ready = json!({"op": 0, "t": "READY", "s": seq, "d": {"v": 10,
                    "session_id": DISCORD_SESSION, "user": {"id": "1", "username": "clarify"},
                    "resume_gateway_url": format!("ws://{gateway}/resume"), "guilds": []}});
                s.dispatches.push(ready);
                sent = Some(seq - 1);
                None
            }
            Some(2) => {
                let _ = socket
                    .send(Message::Close(Some(
                        tokio_tungstenite::tungstenite::protocol::CloseFrame {
                            code: 4004.into(),
                            reason: "Authentication failed.".into(),
                        },
                    )))
                    .await;
                return;
            }
            Some(6) if payload["d"]["session_id"] == DISCORD_SESSION => {
                let from = usize::try_from(payload["d"]["seq"].as_u64().unwrap_or(0)).unwrap();
                let (seq, missed) = {
                    let mut s = state.lock().unwrap();
                    let seq = s.dispatches.len() + 1;
                    // The missed dispatches, then RESUMED.
                    let missed = s.dispatches[from..].to_vec();
                    s.dispatches
                        .push(json!({"op": 0, "t": "RESUMED", "s": seq, "d": {}}));
                    (seq, missed)
                };
                for dispatch in missed {
                    let _ = socket.send(Message::text(dispatch.to_string())).await;
                }
                sent = Some(seq - 1);
                None
            }
            Some(6) => Some(json!({"op": 9, "d": false})),
            _ => None,
        };
        if let Some(answer) = answer
            && socket
                .send(Message::text(answer.to_string()))
                .await
                .is_err()
        {
            return;
        }
    }
}
