//! The harness for Clarify's black-box tests: a real server bound to
//! 127.0.0.1:0 in this process, stopped through a shutdown channel.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server. Dropping it shuts the server down.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
    client: reqwest::Client,
}

impl TestServer {
    /// Binds 127.0.0.1:0 first, so the server is reachable the moment this
    /// returns: no sleeping, no polling.
    ///
    /// # Panics
    /// When the listener cannot be bound.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("bound address");
        let (shutdown, signal) = oneshot::channel::<()>();
        let state = clarify_server::AppState::new();
        let task = tokio::spawn(clarify_server::serve(listener, state, async move {
            let _ = signal.await;
        }));
        Self {
            addr,
            shutdown: Some(shutdown),
            task: Some(task),
            client: reqwest::Client::new(),
        }
    }

    /// The absolute URL of `path` on this server.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// An HTTP client for this server.
    #[must_use]
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Stops the server and waits until it has finished.
    ///
    /// # Panics
    /// When the server task failed.
    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server ran");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}
