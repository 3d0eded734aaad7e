//! Serving connections (issue 26): HTTP/1.1 through hyper, each request's
//! headers due within [`HEADER_TIMEOUT`] (hyper starts that clock when it
//! waits for a request, so an idle keep-alive connection is closed after
//! it too; a long poll, an SSE stream or a WebSocket is not waiting for a
//! request and is never cut), its body within [`BODY_TIMEOUT`] at a
//! minimum rate ([`body`]), at most a cap of connections at once
//! ([`admission`]), below the file limit raised at start, and a listening
//! queue deep enough for a burst ([`backlog`]).

pub(crate) mod admission;
mod backlog;
pub mod body;
mod held;
mod owned;

use std::future::Future;
use std::io;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

pub(crate) use admission::Admission;
use admission::Admitted;

/// How long a client has to send a request's headers, from the moment the
/// server waits for them.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request's body once its headers came,
/// a second more for every [`body::MIN_RATE`] bytes that did.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How connections are served.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections held at once at most.
    pub cap: usize,
    /// [`HEADER_TIMEOUT`], unless a test shortens it.
    pub header_timeout: Duration,
    /// [`BODY_TIMEOUT`], unless a test shortens it.
    pub body_timeout: Duration,
}

/// Files kept free beside the connections: the database, outgoing webhooks
/// and resume commands, the overlay's assets.
pub const FILE_HEADROOM: u64 = 256;

/// Raises the soft limit on open files to the hard one; the soft limit now.
#[must_use]
pub fn raise_file_limit() -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(error) => {
            tracing::warn!(%error, "the open-file limit was not raised");
            rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft)
        }
    }
}

/// The connection cap under a file limit of `files`: all but
/// [`FILE_HEADROOM`] of them (half, under a small limit).
#[must_use]
pub fn connection_cap(files: u64) -> usize {
    let cap = if files > 2 * FILE_HEADROOM {
        files - FILE_HEADROOM
    } else {
        files / 2
    };
    usize::try_from(cap).unwrap_or(usize::MAX).max(1)
}

/// Serves `router` on `listener`, within `limits`, letting connections in
/// through `admission` (made with `limits.cap`: its count is a gauge), until
/// `shutdown`; then stops accepting, cancels `streams` (long-lived streams
/// would hold shutdown open forever) and lets requests in flight finish.
///
/// # Errors
/// None yet: accept errors are logged and waited out, as hyper's server
/// did (a full file table empties as connections close).
pub(crate) async fn run(
    listener: TcpListener,
    router: Router,
    (limits, admission): (Limits, Admission),
    streams: CancellationToken,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    backlog::deepen(&listener);
    let stopping = CancellationToken::new();
    // Each connection's task holds a sender: when all are gone, all ended.
    let (alive, mut ended) = mpsc::channel::<()>(1);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    accept_error(&error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(admitted) = admission.admit() else {
            drop(tcp);
            continue;
        };
        let task = Connection {
            router: router.clone(),
            limits,
            stopping: stopping.clone(),
            _alive: alive.clone(),
        };
        tokio::spawn(task.serve(tcp, admitted));
    }
    drop(listener);
    streams.cancel();
    stopping.cancel();
    drop(alive);
    let _ = ended.recv().await;
    Ok(())
}

/// What one connection's task holds.
struct Connection {
    router: Router,
    limits: Limits,
    stopping: CancellationToken,
    _alive: mpsc::Sender<()>,
}

impl Connection {
    async fn serve(self, tcp: TcpStream, admitted: Admitted) {
        // Responses leave in several small writes (an SSE stream's priming
        // event, the data, the last chunk): with Nagle's algorithm on,
        // every keep-alive client waited ~40 ms for its own delayed ACK
        // before the later writes went out (issue 17;
        // `tests/benches/keepalive.rs`).
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY not set on a connection");
        }
        let admitted = std::sync::Arc::new(admitted);
        let evicted = admitted.evicted.clone();
        let user = admitted.clone();
        // One clone of the router per connection: serving the `Router`
        // through a make-service rebuilt every route for every connection,
        // 160 KiB each (`tests/benches/waiters.rs`).
        let router = self.router;
        let body_timeout = self.limits.body_timeout;
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let request = owned::own_head(request).map(|incoming| {
                axum::body::Body::new(body::Arriving::new(incoming, &user, body_timeout))
            });
            router.clone().oneshot(request)
        });
        // The place is held by the socket itself, so that a WebSocket,
        // which outlives this connection's HTTP part, keeps counting.
        let io = TokioIo::new(held::Held::new(tcp, admitted));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout);
        let mut connection = std::pin::pin!(http.serve_connection(io, service).with_upgrades());
        let mut graceful = false;
        loop {
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::trace!(%error, "connection ended");
                    }
                    return;
                }
                // Dropping the connection closes the socket at once.
                () = evicted.cancelled(), if !graceful => return,
                () = self.stopping.cancelled(), if !graceful => {
                    graceful = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// Waits out an accept error that is not one connection's: a full file
/// table empties as connections close.
async fn accept_error(error: &io::Error) {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accept error");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_headroom_below_the_file_limit() {
        assert_eq!(connection_cap(1024), 768);
        assert_eq!(connection_cap(512), 256);
        assert_eq!(connection_cap(256), 128);
        assert_eq!(connection_cap(1_048_576), 1_048_320);
        assert_eq!(connection_cap(0), 1);
    }
}
