//! [`Receiver`]: a real HTTP resume target standing in for an agent's
//! webhook.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::sync::oneshot;

use crate::background::serve_in_background;

/// A resume target for tests: a real HTTP server on 127.0.0.1:0 that
/// records every resume POSTed to `/resume` and refuses those to `/refuse`.
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    received: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    hanging: std::sync::Arc<tokio::sync::Semaphore>,
    _shutdown: oneshot::Sender<()>,
}

impl Receiver {
    /// Binds and starts the receiver.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start() -> Self {
        use axum::routing::post;
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = received.clone();
        // One permit per request that reached /hang.
        let hanging = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
        let arrived = hanging.clone();
        let app = axum::Router::new()
            .route(
                "/resume",
                post(move |axum::Json(body): axum::Json<Value>| {
                    let sink = sink.clone();
                    async move {
                        sink.lock().unwrap().push(body);
                        "ok"
                    }
                }),
            )
            .route(
                "/refuse",
                post(|| async { (axum::http::StatusCode::SERVICE_UNAVAILABLE, "no") }),
            )
            .route(
                "/redirect",
                post(|| async {
                    (
                        axum::http::StatusCode::TEMPORARY_REDIRECT,
                        [(axum::http::header::LOCATION, "/resume")],
                    )
                }),
            )
            .route(
                "/hang",
                post(move || {
                    let arrived = arrived.clone();
                    async move {
                        arrived.add_permits(1);
                        std::future::pending::<()>().await;
                    }
                }),
            );
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            received,
            hanging,
            _shutdown: shutdown,
        }
    }

    /// The URL that accepts resumes.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/resume", self.addr)
    }

    /// A URL that refuses them (503).
    #[must_use]
    pub fn refusing_url(&self) -> String {
        format!("http://{}/refuse", self.addr)
    }

    /// A URL that redirects resumes (307) to the accepting one.
    #[must_use]
    pub fn redirecting_url(&self) -> String {
        format!("http://{}/redirect", self.addr)
    }

    /// The port it listens on (127.0.0.1).
    #[must_use]
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A URL that takes resumes and never answers.
    #[must_use]
    pub fn hanging_url(&self) -> String {
        format!("http://{}/hang", self.addr)
    }

    /// Waits until a resume has reached the hanging URL.
    ///
    /// # Panics
    /// When the receiver is gone.
    pub async fn wait_for_hanging(&self) {
        self.hanging
            .acquire()
            .await
            .expect("receiver alive")
            .forget();
        self.hanging.add_permits(1);
    }

    /// How many resumes reached the hanging URL.
    #[must_use]
    pub fn hanging_count(&self) -> usize {
        self.hanging.available_permits()
    }

    /// How many resumes were accepted.
    ///
    /// # Panics
    /// When the lock is poisoned.
    #[must_use]
    pub fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    /// The last resume accepted.
    ///
    /// # Panics
    /// When none was.
    #[must_use]
    pub fn last(&self) -> Value {
        self.received
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a resume")
    }
}
