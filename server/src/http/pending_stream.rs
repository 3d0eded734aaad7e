//! `GET /api/v1/pending/stream`: Server-Sent Events of bundles that start
//! or stop waiting, scoped to what the caller may see, so `curl -N` or any
//! script can follow the queue without polling. It starts with what waits
//! now, then follows the changes.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::HOST;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use clarify_core::api::{Notice, NoticeKind};
use futures_util::Stream;
use tokio::sync::broadcast::{Receiver, error::RecvError};

use super::error::{Error, Result};
use super::visibility::Visibility;
use crate::auth::Caller;
use crate::events::Event;
use crate::quota::{Place, Places};
use crate::state::AppState;

/// Bundles whose last notice a stream remembers, to send each change once.
const REMEMBERED: usize = 4096;

/// Follows the queue: a `waiting` event for each bundle waiting now, then
/// one event per change (`waiting`, `resolved`, `expired`, `cancelled`),
/// each a `Notice`; `resync` when the reader fell behind (list again).
#[utoipa::path(
    get,
    path = "/pending/stream",
    tag = "clarification",
    responses(
        (status = 200, description = "text/event-stream: one `Notice` (JSON) per event, named by its `event`; those waiting now first; a `resync` event means some were missed", content_type = "text/event-stream", body = Notice),
        (status = 429, description = "As many event connections (streams and WebSockets) open as this user (with their agents), or the server, may hold", body = clarify_core::ErrorBody),
    )
)]
pub async fn stream(
    State(state): State<AppState>,
    Extension(sockets): Extension<Arc<Places>>,
    caller: Caller,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = std::result::Result<SseEvent, Infallible>>>> {
    // Agents ask and wait; following the queue is for the people answering.
    caller.person()?;
    // A stream holds a place like a WebSocket does, under the same caps
    // (per user and in total), so no token holder can open them
    // without end.
    let place = sockets
        .open(&caller)
        .map_err(|full| Error::TooMany(sockets.reason(full).to_owned()))?;
    let base = base_url(&headers);
    // Subscribed before the snapshot is read: nothing falls between them
    // (a change seen twice is sent once, see `Follower::fresh`).
    let receiver = state.events.subscribe();
    let snapshot = state
        .lifecycle
        .reading
        .waiting_notices(&caller, &base)
        .await?;
    let mut follower = Follower {
        state,
        visibility: Visibility::new(caller),
        receiver,
        base,
        queued: VecDeque::new(),
        last: HashMap::new(),
        _place: place,
    };
    for notice in snapshot {
        if follower.fresh(&notice) {
            follower.queued.push_back(notice);
        }
    }
    let events = futures_util::stream::unfold(follower, |mut follower| async move {
        let next = follower.next().await?;
        Some((Ok(next), follower))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// The URL the reader reached this server by, for the links in notices.
fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// One reader's stream.
struct Follower {
    state: AppState,
    visibility: Visibility,
    receiver: Receiver<Event>,
    base: String,
    queued: VecDeque<Notice>,
    /// The last notice sent per bundle.
    last: HashMap<String, NoticeKind>,
    /// Its place among the event connections, freed when the stream ends.
    _place: Place,
}

impl Follower {
    /// Whether `notice` tells something not yet sent.
    fn fresh(&mut self, notice: &Notice) -> bool {
        if self.last.get(&notice.pending_id) == Some(&notice.event) {
            return false;
        }
        if self.last.len() >= REMEMBERED {
            self.last.clear();
        }
        self.last.insert(notice.pending_id.clone(), notice.event);
        true
    }

    /// The next event to send; `None` ends the stream (shutdown).
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(notice) = self.queued.pop_front() {
                return Some(sse(&notice));
            }
            let event = tokio::select! {
                () = self.state.shutdown.cancelled() => return None,
                event = self.receiver.recv() => event,
            };
            let event = match event {
                Ok(event) => event,
                Err(RecvError::Lagged(_)) => {
                    return Some(SseEvent::default().event("resync").data("{}"));
                }
                Err(RecvError::Closed) => return None,
            };
            if !self.visibility.admits(&self.state, &event).await {
                continue;
            }
            match self
                .state
                .lifecycle
                .reading
                .notice_of(&event, &self.base)
                .await
            {
                Ok(Some(notice)) if self.fresh(&notice) => return Some(sse(&notice)),
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "a notice could not be made"),
            }
        }
    }
}

fn sse(notice: &Notice) -> SseEvent {
    SseEvent::default()
        .event(notice.event.as_str())
        .data(serde_json::to_string(notice).unwrap_or_default())
}
