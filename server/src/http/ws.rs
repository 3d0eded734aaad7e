//! `GET /api/v1/ws`: live events for browsers, one JSON text frame each.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;
use crate::auth::{self, Caller};

/// Upgrades to a WebSocket that streams every event until either side closes.
pub async fn events(
    State(state): State<AppState>,
    caller: Caller,
    upgrade: WebSocketUpgrade,
) -> Response {
    // Subscribe before the upgrade completes, so nothing published after the
    // 101 answer is missed.
    let receiver = state.events.subscribe();
    upgrade.on_upgrade(move |socket| stream(socket, receiver, state, caller))
}

/// Whether `caller` may see `event`: the same task visibility as the API,
/// so nobody receives another user's questions or answers; and an agent
/// token only its own session's events, never a sibling session's.
async fn visible(state: &AppState, caller: &Caller, event: &crate::events::Event) -> bool {
    match caller {
        Caller::Unscoped => true,
        Caller::Agent { session_id } => event_session(&event.payload) == Some(session_id),
        Caller::User(_) => {
            let task_id = event.payload["task_id"].as_str().unwrap_or_default();
            auth::may_access_task(state.db(), caller, task_id)
                .await
                .unwrap_or(false)
        }
    }
}

/// The session an event is about: a message's `task_session_id`, or the
/// `session_id` of a task or session event.
fn event_session(payload: &serde_json::Value) -> Option<&str> {
    payload["task_session_id"]
        .as_str()
        .or_else(|| payload["session_id"].as_str())
}

async fn stream(
    mut socket: WebSocket,
    mut events: tokio::sync::broadcast::Receiver<crate::events::Event>,
    state: AppState,
    caller: Caller,
) {
    loop {
        tokio::select! {
            () = state.shutdown.cancelled() => {
                let _ = socket.send(Message::Close(None)).await;
                return;
            }
            event = events.recv() => match event {
                Ok(event) => {
                    if !visible(&state, &caller, &event).await {
                        continue;
                    }
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
