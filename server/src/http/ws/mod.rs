//! `GET /api/v1/ws`: live events for browsers, one JSON text frame each,
//! bounded: sockets are counted ([`limits`]), a client can only send small
//! frames (it has nothing to say but pings), and one that falls behind is
//! told to reload (`resync`) rather than silently missing events.

pub mod limits;

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::response::Response;
use clarify_core::EventKind;
use tokio::sync::broadcast::error::RecvError;

use super::error::Error;
use super::visibility::Visibility;
use crate::auth::Caller;
use crate::clock;
use crate::events::Event;
use crate::quota::{Full, Place, Places};
use crate::state::AppState;

/// The largest frame a client may send: pings and closes only.
const MAX_INCOMING: usize = 4096;

/// Upgrades to a WebSocket that streams every event until either side
/// closes; over a cap, the socket is closed at once with the reason.
#[utoipa::path(
    get,
    path = "/ws",
    tag = "events",
    responses(
        (status = 101, description = "Switching to a WebSocket: one `Event` (a JSON text frame) per change you can see. \
Over a connection cap the socket is closed at once: 1008 (per user) or 1013 (in total), with the reason."),
        (status = 400, description = "Not a WebSocket upgrade request", body = clarify_core::ErrorBody),
    )
)]
pub async fn events(
    State(state): State<AppState>,
    Extension(sockets): Extension<Arc<Places>>,
    caller: Caller,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, Error> {
    let upgrade = upgrade.map_err(|rejection| {
        Error::BadRequest(format!(
            "expected a WebSocket upgrade request: {}",
            rejection.body_text()
        ))
    })?;
    // Subscribe before the upgrade completes, so nothing published after the
    // 101 answer is missed.
    let receiver = state.events.subscribe();
    let place = sockets.open(&caller);
    Ok(upgrade
        .max_message_size(MAX_INCOMING)
        .max_frame_size(MAX_INCOMING)
        .on_upgrade(move |socket| async move {
            match place {
                Ok(place) => stream(socket, receiver, state, caller, place).await,
                Err(full) => refuse(socket, full, sockets.reason(full)).await,
            }
        }))
}

async fn refuse(mut socket: WebSocket, full: Full, reason: &'static str) {
    let code = match full {
        Full::User => close_code::POLICY,
        Full::Server => close_code::AGAIN,
    };
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

/// What a socket that fell behind is sent: reload, events were missed.
fn resync() -> Event {
    Event {
        kind: "notification".to_owned(),
        action: EventKind::Resync,
        payload: clarify_core::api::Payload::None,
        timestamp: clock::rfc3339(clock::now_micros()),
    }
}

async fn stream(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<Event>,
    state: AppState,
    caller: Caller,
    _place: Place,
) {
    let mut visibility = Visibility::new(caller);
    loop {
        tokio::select! {
            () = state.shutdown.cancelled() => {
                let _ = socket.send(Message::Close(None)).await;
                return;
            }
            event = events.recv() => {
                let event = match event {
                    Ok(event) if visibility.admits(&state, &event).await => event,
                    Ok(_) => continue,
                    // A slow client missed some events: it is told to reload
                    // what it shows, then gets the newer ones.
                    Err(RecvError::Lagged(missed)) => {
                        tracing::debug!(missed, "websocket client lagged; sent resync");
                        resync()
                    }
                    Err(RecvError::Closed) => return,
                };
                let Ok(text) = serde_json::to_string(&event) else { continue };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
