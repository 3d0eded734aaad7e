//! Opening a WebSocket at a URL a peer handed back (issue 48: Slack's
//! `apps.connections.open`, Discord's `GET /gateway/bot` and READY's
//! `resume_gateway_url`) under the same network policy as every webhook:
//! the name is resolved here and only an address the policy admits is
//! connected to, so a hostile answer cannot make Clarify reach a private
//! network. TLS (`wss:`) is set up on that very socket with the web's root
//! certificates.

use std::sync::Arc;

use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::resume::WebhookNetworks;

/// A byte stream, plain or TLS.
pub trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

/// An open socket.
pub type Socket = WebSocketStream<Box<dyn Stream>>;

/// Opens `url` (`wss:`, or `ws:` for a stand-in), connecting only to an
/// address `networks` admits, reading messages of at most `max_message`
/// bytes. The caller bounds how long it may take.
///
/// # Errors
/// Why not, never with the URL (a ticket in its query is a credential).
pub async fn open(
    networks: &WebhookNetworks,
    url: &str,
    max_message: usize,
) -> Result<Socket, String> {
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
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message));
    let (socket, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map_err(|e| format!("the socket's upgrade at {host}: {e}"))?;
    Ok(socket)
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
