//! The listening socket's queue of connections not yet accepted (issue 45
//! item 8a). Tokio listens with a backlog of 128: a burst of connections
//! beyond it overflowed the queue, and Linux, answering with SYN cookies,
//! then dropped the handshake's last ACK of those it had no room for. Their
//! clients held an open connection the server never saw, so neither the
//! header timeout nor an eviction could ever close it (2,000 idle sockets
//! opened at once: 1,253 still open 25 s later, the server holding none).

use tokio::net::TcpListener;

/// Asked of `listen(2)`; the kernel takes at most `net.core.somaxconn`
/// (4,096 by default since Linux 5.4).
const BACKLOG: i32 = 65_535;

/// Deepens `listener`'s queue: listening again on a listening socket only
/// changes its backlog, so it works on a listener bound by the caller.
pub(super) fn deepen(listener: &TcpListener) {
    if let Err(error) = socket2::SockRef::from(listener).listen(BACKLOG) {
        tracing::warn!(%error, "the listening queue was not deepened");
    }
}
