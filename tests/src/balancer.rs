//! [`RoundRobin`]: a real HTTP load balancer in front of replicas.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::response::IntoResponse as _;
use tokio::sync::oneshot;

use crate::background::serve_in_background;
use crate::server::TestServer;

/// A round-robin load balancer in front of several replicas: a real HTTP
/// proxy on 127.0.0.1:0 sending each request to the next replica in turn and
/// streaming the answer back (long polls and MCP's event streams included).
#[derive(Debug)]
pub struct RoundRobin {
    addr: SocketAddr,
    _shutdown: oneshot::Sender<()>,
}

struct Backends {
    urls: Vec<String>,
    next: std::sync::atomic::AtomicUsize,
    client: reqwest::Client,
}

impl RoundRobin {
    /// Starts the balancer over `replicas`.
    ///
    /// # Panics
    /// When it cannot bind.
    pub async fn start(replicas: &[&TestServer]) -> Self {
        let backends = Arc::new(Backends {
            urls: replicas.iter().map(|r| r.url("")).collect(),
            next: std::sync::atomic::AtomicUsize::new(0),
            client: reqwest::Client::new(),
        });
        let app = axum::Router::new().fallback(forward).with_state(backends);
        let (addr, shutdown) = serve_in_background(app).await;
        Self {
            addr,
            _shutdown: shutdown,
        }
    }

    /// The absolute URL of `path` behind the balancer.
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn forward(
    axum::extract::State(backends): axum::extract::State<Arc<Backends>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::header;
    use std::sync::atomic::Ordering;
    let turn = backends.next.fetch_add(1, Ordering::Relaxed) % backends.urls.len();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", axum::http::uri::PathAndQuery::as_str)
        .to_owned();
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return axum::http::StatusCode::BAD_REQUEST.into_response();
    };
    let mut outgoing = backends
        .client
        .request(parts.method, format!("{}{path}", backends.urls[turn]))
        .body(body);
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            outgoing = outgoing.header(name, value);
        }
    }
    let Ok(answer) = outgoing.send().await else {
        return axum::http::StatusCode::BAD_GATEWAY.into_response();
    };
    let mut response = axum::response::Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != header::TRANSFER_ENCODING && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    response
        .body(axum::body::Body::from_stream(answer.bytes_stream()))
        .unwrap_or_else(|_| axum::http::StatusCode::BAD_GATEWAY.into_response())
}
