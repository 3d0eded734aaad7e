//! Small real HTTP servers the tests stand up beside Clarify.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Serves `app` on 127.0.0.1:0 until the returned sender is dropped.
pub(crate) async fn serve_in_background(app: axum::Router) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (shutdown, signal) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = signal.await;
            })
            .await;
    });
    (addr, shutdown)
}
