//! `GET /api/v1/ws`: live events for browsers, one JSON text frame each.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;

/// Upgrades to a WebSocket that streams every event until either side closes.
pub async fn events(State(state): State<AppState>, upgrade: WebSocketUpgrade) -> Response {
    // Subscribe before the upgrade completes, so nothing published after the
    // 101 answer is missed.
    let receiver = state.events.subscribe();
    upgrade.on_upgrade(move |socket| stream(socket, receiver))
}

async fn stream(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<crate::events::Event>,
) {
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => {
                    let Ok(text) = serde_json::to_string(&event) else { continue };
                    if socket.send(Message::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                // A slow client missed some events; it keeps the newer ones
                // and re-reads state through the API.
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "websocket client lagged");
                }
                Err(RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}
