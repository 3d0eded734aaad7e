//! Opening a Socket Mode connection (issue 48 item 1): `POST
//! apps.connections.open` with the app-level token hands back a `wss:` URL
//! for one connection; that URL is a peer's word, so its name is resolved
//! here and only an address the network policy admits is connected to (a
//! hostile answer cannot make Clarify reach a private network). TLS is set
//! up on that socket with the web's root certificates.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::ids::Secret;
use crate::resume::Webhooks;

/// How long opening a connection (the call, TCP, TLS, the upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The largest frame read: an envelope carries one interaction with its
/// message's blocks, far below tungstenite's 64 MiB.
const MAX_MESSAGE: usize = 1 << 20;

/// A byte stream, plain or TLS.
pub(super) trait Stream:
    tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send
{
}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

/// An open Socket Mode connection.
pub(super) type Socket = WebSocketStream<Box<dyn Stream>>;

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
        let parsed =
            reqwest::Url::parse(url).map_err(|_| "the socket URL does not parse".to_owned())?;
        let tls = match parsed.scheme() {
            "wss" => true,
            "ws" => false,
            _ => return Err("the socket URL is not ws: or wss:".to_owned()),
        };
        let host = parsed
            .host_str()
            .ok_or_else(|| "the socket URL names no host".to_owned())?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = parsed
            .port_or_known_default()
            .unwrap_or(if tls { 443 } else { 80 });
        let networks = self.webhooks.networks();
        let admitted: Vec<_> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| format!("{host} does not resolve"))?
            .filter(|a| networks.admits_socket(*a))
            .collect();
        if admitted.is_empty() {
            return Err(format!(
                "{host} resolves to no address the network policy admits"
            ));
        }
        let tcp = TcpStream::connect(admitted.as_slice())
            .await
            .map_err(|e| format!("connecting to {host}: {e}"))?;
        let stream: Box<dyn Stream> = if tls {
            let name = ServerName::try_from(host.clone())
                .map_err(|_| format!("{host} is no TLS server name"))?;
            let tls = connector()
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS with {host}: {e}"))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let request = parsed
            .as_str()
            .into_client_request()
            .map_err(|_| "the socket URL is no WebSocket request".to_owned())?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let (socket, _) =
            tokio_tungstenite::client_async_with_config(request, stream, Some(config))
                .await
                .map_err(|e| format!("the socket's upgrade at {host}: {e}"))?;
        Ok(socket)
    }
}

/// A TLS client trusting the web's root certificates.
///
/// # Panics
/// When the ring provider offers no safe protocol version (a broken
/// build, not a runtime state).
fn connector() -> TlsConnector {
    let roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("the ring provider offers TLS 1.2 and 1.3")
    .with_root_certificates(roots)
    .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}
