//! Opening a Socket Mode connection (issue 48 item 1): `POST
//! apps.connections.open` with the app-level token hands back a `wss:` URL
//! for one connection; that URL is a peer's word, so its name is resolved
//! here and only an address the network policy admits is connected to (a
//! hostile answer cannot make Clarify reach a private network: the
//! channels' websocket module, [`crate::channels::websocket`], opens it).

use std::time::Duration;

use crate::channels::websocket;
pub(super) use crate::channels::websocket::Socket;
use crate::ids::Secret;
use crate::resume::Webhooks;

/// How long opening a connection (the call, TCP, TLS, the upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The largest frame read: an envelope carries one interaction with its
/// message's blocks, far below tungstenite's 64 MiB.
const MAX_MESSAGE: usize = 1 << 20;

/// Where and as whom Socket Mode connections are opened.
#[derive(Debug, Clone)]
pub(super) struct Opener {
    /// The app-level token (`xapp-…`, `connections:write`).
    pub app_token: Secret,
    /// The Web API's base URL.
    pub api_url: String,
    /// The guarded client and its network policy.
    pub webhooks: Webhooks,
}

impl Opener {
    /// A new connection, not yet greeted.
    ///
    /// # Errors
    /// Why not, never with the URL (its ticket is a credential).
    pub(super) async fn open(&self) -> Result<Socket, String> {
        tokio::time::timeout(CONNECT_TIMEOUT, self.open_now())
            .await
            .map_err(|_| "Slack did not answer in time".to_owned())?
    }

    async fn open_now(&self) -> Result<Socket, String> {
        let bearer = format!("Bearer {}", self.app_token.0);
        let answer = self
            .webhooks
            .call(
                &format!(
                    "{}/apps.connections.open",
                    self.api_url.trim_end_matches('/')
                ),
                "{}".to_owned(),
                &[("authorization", bearer.as_str())],
                "apps.connections.open",
            )
            .await
            .map_err(|_| "apps.connections.open failed".to_owned())?;
        let Some(url) = answer["url"].as_str().filter(|_| answer["ok"] == true) else {
            let why = answer["error"].as_str().unwrap_or("no url");
            return Err(format!("apps.connections.open refused: {why}"));
        };
        self.connect(url).await
    }

    /// Opens the WebSocket at `url` (`wss:`, or `ws:` for a stand-in).
    async fn connect(&self, url: &str) -> Result<Socket, String> {
        websocket::open(self.webhooks.networks(), url, MAX_MESSAGE).await
    }
}
