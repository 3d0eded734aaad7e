//! A request's body under a deadline (issue 45 item 6 B2): it must arrive
//! within the body timeout of its first read, plus a second for every
//! [`MIN_RATE`] bytes that did arrive, so a large body sent at a fair pace
//! is never cut and a trickle is. The clock starts at the first read, not
//! with the headers: a client that sent `Expect: 100-continue` sends
//! nothing before it, however long the handler took to get there. While
//! it stalls, its connection may be evicted like an idle one
//! ([`super::admission`]), as the youngest of them: a client that sent
//! headers and no body holds no place a newcomer needs, and one whose
//! handler has not read yet, or whose bytes flow, keeps its place.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};

use super::admission::Admitted;

/// The pace a body may keep beyond its first [`super::Limits::body_timeout`]
/// without being cut: 16 KiB a second (an MCP request's 1 MiB in at most
/// 64 s more).
pub const MIN_RATE: u64 = 16 << 10;

/// What a body that did not arrive in time fails with; the handlers
/// answer it `408` ([`too_slow`]).
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub struct TooSlow;

/// Whether `error`, or what caused it, is a [`TooSlow`] body.
#[must_use]
pub fn too_slow(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<TooSlow>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// `Incoming`, due by a deadline; its connection evictable until it ends.
pub(super) struct Arriving {
    inner: Incoming,
    /// When the body was first read.
    started: Option<Instant>,
    timeout: Duration,
    received: u64,
    /// Made when the body first keeps a reader waiting: most bodies are in
    /// the first read already.
    sleep: Option<Pin<Box<Sleep>>>,
    /// Told when the body stalls and when it moves again, then once it
    /// has arrived (or is no longer wanted).
    place: Option<Arc<Admitted>>,
    /// Waiting for bytes that have not come: the connection is evictable.
    stalled: bool,
}

impl Arriving {
    pub(super) fn new(inner: Incoming, place: &Arc<Admitted>, timeout: Duration) -> Self {
        // In use while the handler gets to its body and while the body
        // flows: evictable only while it stalls (review of issue 45: a
        // trusted client's POST was evicted before any attacker's socket
        // while its handler had not read yet).
        place.in_use();
        let place = (!inner.is_end_stream()).then(|| place.clone());
        Self {
            inner,
            started: None,
            timeout,
            received: 0,
            sleep: None,
            place,
            stalled: false,
        }
    }

    /// When the rest is due: later for every byte that came.
    fn due(&self, started: Instant) -> Instant {
        let earned = Duration::from_micros(self.received.saturating_mul(1_000_000) / MIN_RATE);
        started + self.timeout + earned
    }

    /// The body stalls, or moves again.
    fn stall(&mut self, stalled: bool) {
        if self.stalled == stalled {
            return;
        }
        self.stalled = stalled;
        if let Some(place) = &self.place {
            if stalled {
                place.arriving();
            } else {
                place.in_use();
            }
        }
    }

    fn arrived(&mut self) {
        if let Some(place) = self.place.take() {
            place.in_use();
        }
    }
}

impl Body for Arriving {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let started = *this.started.get_or_insert_with(Instant::now);
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.stall(false);
                if let Some(data) = frame.data_ref() {
                    this.received += u64::try_from(data.len()).unwrap_or(u64::MAX);
                }
                if this.inner.is_end_stream() {
                    this.arrived();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                this.arrived();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error.into()))),
            Poll::Pending => {
                this.stall(true);
                let due = this.due(started);
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
                if sleep.deadline() != due {
                    sleep.as_mut().reset(due);
                }
                ready!(sleep.as_mut().poll(cx));
                Poll::Ready(Some(Err(Box::new(TooSlow))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Arriving {
    fn drop(&mut self) {
        // Dropped unread: the request is being answered, and hyper closes
        // the connection after a body left unfinished.
        self.arrived();
    }
}
