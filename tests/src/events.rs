//! A browser's live event stream on a test server.

use serde_json::Value;

use crate::TestServer;

/// A browser's live event stream (`/api/v1/ws`) on one server.
pub type EventSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next event with `action` on `socket`, skipping others.
///
/// # Panics
/// When the socket closes first.
pub async fn next_event(socket: &mut EventSocket, action: &str) -> Value {
    use futures_util::StreamExt as _;
    loop {
        let frame = socket.next().await.expect("socket open").expect("frame");
        if let tokio_tungstenite::tungstenite::Message::Text(text) = frame {
            let event: Value = serde_json::from_str(&text).expect("JSON event");
            if event["action"] == action {
                return event;
            }
        }
    }
}

/// The close frame the server ends `socket` with: its code and reason.
///
/// # Panics
/// When the socket ends without one.
pub async fn closed_with(
    socket: &mut EventSocket,
) -> (
    tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode,
    String,
) {
    use futures_util::StreamExt as _;
    loop {
        match socket.next().await {
            Some(Ok(tokio_tungstenite::tungstenite::Message::Close(Some(frame)))) => {
                return (frame.code, frame.reason.to_string());
            }
            Some(Ok(_)) => {}
            other => panic!("no close frame: {other:?}"),
        }
    }
}

impl TestServer {
    /// Opens the live event stream as an unauthenticated browser.
    ///
    /// # Panics
    /// When the upgrade fails.
    pub async fn events(&self) -> EventSocket {
        tokio_tungstenite::connect_async(self.url("/api/v1/ws").replace("http://", "ws://"))
            .await
            .expect("websocket")
            .0
    }

    /// Opens the live event stream with `token` as its bearer.
    ///
    /// # Panics
    /// When the upgrade fails.
    pub async fn events_as(&self, token: &str) -> EventSocket {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
        let mut request = self
            .url("/api/v1/ws")
            .replace("http://", "ws://")
            .into_client_request()
            .expect("a WebSocket request");
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("a header"),
        );
        tokio_tungstenite::connect_async(request)
            .await
            .expect("websocket")
            .0
    }
}
