//! A blocked `ask_user_question_kandev` held outside rmcp (issue 31 item 3).
//!
//! rmcp checks and dispatches the call as it does any other (headers, era,
//! arguments, the caller), and the tool creates the bundle. Then, instead of
//! waiting inside rmcp's per-request service (its transport, peer and
//! response channels: ~46 KiB a call by massif, `docs/MEASURED.md`), the tool
//! hands what the wait needs to [`hold`], the middleware that sent the call
//! to rmcp. It keeps rmcp's response head and replaces the body with a
//! stream of its own, so rmcp's service ends at once and a waiting agent
//! holds only its waiter, its place and this stream. The stream writes what
//! rmcp would have: progress notifications, then the result shaped for the
//! call's era. A client that goes away drops the stream, which detaches the
//! bundle, as a cancelled call always did.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use clarify_core::{PendingId, Question};
use futures_util::Stream;
use rmcp::model::{
    CallToolResult, ProgressNotificationParam, ProgressToken, RequestId, ServerJsonRpcMessage,
    ServerNotification, ServerResult,
};
use tokio::sync::oneshot;

use super::turns::Turns;
use super::{ask_tool, result};
use crate::lifecycle::{Error, Lifecycle, WaitOutcome};
use crate::quota::Place;
use crate::waiters::Waiting;

/// As often as rmcp's own streams send a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// What a blocked call needs once rmcp is done with it.
pub(super) struct Held {
    pub lifecycle: Lifecycle,
    pub pending_id: PendingId,
    pub questions: Vec<Question>,
    pub waiting: Waiting,
    /// Held for its drop: the wait counts against the caller's share.
    pub _place: Place,
    /// The client's progress token, when it asked for progress.
    pub progress: Option<ProgressToken>,
    /// The JSON-RPC id the result answers.
    pub id: RequestId,
    /// Whether the call came in the 2026-07-28 era or later, whose results
    /// carry `resultType` (rmcp's `ServerHandler` shapes them so).
    pub modern: bool,
    pub every: Duration,
}

/// Where the tool hands a blocked call over: put in the request's
/// extensions by [`hold`], which rmcp passes to the tool.
#[derive(Clone)]
pub(super) struct Handover(Arc<Mutex<Option<oneshot::Sender<Held>>>>);

impl Handover {
    /// Hands `held` to the middleware; gives it back when nobody takes it
    /// (the client went away, or the call did not come through [`hold`]).
    pub fn give(&self, held: Held) -> Result<(), Box<Held>> {
        let sender = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        match sender {
            Some(sender) => sender.send(held).map_err(Box::new),
            None => Err(Box::new(held)),
        }
    }
}

/// Sends every request to rmcp with a [`Handover`], taking turns
/// ([`super::turns`]); when the tool hands a blocked call over, answers
/// with rmcp's head and a body of its own.
pub(super) async fn hold(
    State(turns): State<Arc<Turns>>,
    mut request: Request,
    next: Next,
) -> Response {
    // Held until rmcp is done with the request: it hands the call over, or
    // drops the hand-over with the request. The body was read whole before
    // (`jsonrpc::well_formed`, under the body deadline, a non-JSON one
    // refused), so a slow client cannot sit on a turn. Never closed: a
    // failed take cannot happen, and would mean stop.
    let caller = request.extensions().get::<crate::auth::Caller>();
    let Some(_turn) = turns.take(caller).await else {
        return crate::http::error::Error::ShuttingDown.into_response();
    };
    let (sender, taken) = oneshot::channel();
    request
        .extensions_mut()
        .insert(Handover(Arc::new(Mutex::new(Some(sender)))));
    let response = next.run(request).await;
    let streams = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !response.status().is_success() || !streams {
        return response;
    }
    // The tool hands over before it returns; when rmcp is done with the
    // request without a hand-over, the sender is dropped with it.
    match taken.await {
        Ok(held) => {
            let (parts, _rmcp) = response.into_parts();
            let body = Sse::new(held.into_stream())
                .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
                .into_response()
                .into_body();
            Response::from_parts(parts, body)
        }
        Err(_) => response,
    }
}

/// The wait, as the stream of events it writes; detaches on drop unless it
/// ended (R7: the answer then resumes the agent elsewhere).
struct Waiter {
    /// Taken on drop, to let go of the waiter before detaching.
    held: Option<Held>,
    ticks: u32,
    done: bool,
}

impl Held {
    /// Nobody will be told the outcome here: the question stays open and
    /// its answer resumes the agent through its session (R7). The waiter
    /// goes first, so that the answer is not handed to this call.
    pub async fn detach(self) -> Result<(), Error> {
        drop(self.waiting);
        self.lifecycle.sessions.detach(&self.pending_id).await
    }

    fn into_stream(self) -> impl Stream<Item = Result<Event, Infallible>> + Send {
        let waiter = Waiter {
            held: Some(self),
            ticks: 0,
            done: false,
        };
        futures_util::stream::unfold(waiter, |mut waiter| async move {
            let message = waiter.next().await?;
            let data = serde_json::to_string(&message).unwrap_or_default();
            Some((Ok(Event::default().data(data)), waiter))
        })
    }
}

impl Waiter {
    /// The next message to write: a progress notification, or the result
    /// (after which nothing).
    async fn next(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let held = self.held.as_mut()?;
            if self.done {
                return None;
            }
            let outcome = held
                .lifecycle
                .reading
                .await_outcome(&held.pending_id, &mut held.waiting, held.every)
                .await;
            let ended = match outcome {
                Ok(WaitOutcome::TimedOut) => {
                    self.ticks += 1;
                    match held.progress.clone() {
                        Some(token) => return Some(progress(token, self.ticks)),
                        None => continue,
                    }
                }
                Ok(WaitOutcome::ShuttingDown) => Err(Error::Conflict(
                    "the server is shutting down; the question stays open: ask again",
                )),
                Ok(outcome) => {
                    match ask_tool::outcome_result(
                        held.pending_id.as_str(),
                        &held.questions,
                        &outcome,
                    ) {
                        Some(done) => done,
                        None => continue,
                    }
                }
                Err(error) => Err(error),
            };
            self.done = true;
            return Some(Self::result(held, result::from(ended)));
        }
    }

    /// The result as rmcp's `ServerHandler` shapes it for the call's era.
    fn result(held: &Held, call: CallToolResult) -> ServerJsonRpcMessage {
        let mut result = ServerResult::CallToolResult(call);
        if held.modern {
            result.fill_missing_cache_hints();
        } else {
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
        }
        ServerJsonRpcMessage::response(result, held.id.clone())
    }
}

/// The `ticks`th "still waiting" notification.
fn progress(token: ProgressToken, ticks: u32) -> ServerJsonRpcMessage {
    let note = ProgressNotificationParam::new(token, f64::from(ticks))
        .with_message("waiting for the user's answer");
    ServerJsonRpcMessage::notification(ServerNotification::ProgressNotification(
        rmcp::model::Notification::new(note),
    ))
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else { return };
        if self.done {
            return;
        }
        // The client went away mid-wait (R7).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Err(error) = held.detach().await {
                tracing::warn!(%error, "a cancelled MCP call was not detached");
            }
        });
    }
}
