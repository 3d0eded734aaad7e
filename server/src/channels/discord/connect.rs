//! Opening the gateway's WebSocket at a URL Discord handed back (`GET
//! /gateway/bot`'s `url`, READY's `resume_gateway_url`) under the same
//! network policy as every webhook: the name is resolved here and only
//! an address the policy admits is connected to, so a hostile answer
//! cannot make Clarify reach a private network. TLS (`wss:`) is set up on
//! that socket with the web's root certificates.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::resume::WebhookNetworks;

/// How long connecting (TCP, TLS and the upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The largest gateway message read: a dispatch is a few kilobytes, a
/// READY with many guilds more; far below tungstenite's 64 MiB.
const MAX_MESSAGE: usize = 4 << 20;

/// A byte stream, plain or TLS.
pub(super) trait Stream:
    tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send
{
}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

/// An open gateway socket.
pub(super) type Socket = WebSocketStream<Box<dyn Stream>>;

/// Opens `url` (`wss:`, or `ws:` for a stand-in) with the gateway's query
/// (`v=10&encoding=json`), connecting only to an address `networks`
/// admits.
///
/// # Errors
/// Why not, without the URL's query.
pub(super) async fn open(networks: &WebhookNetworks, url: &str) -> Result<Socket, String> {
    tokio::time::timeout(CONNECT_TIMEOUT, open_now(networks, url))
        .await
        .map_err(|_| "the gateway did not answer in time".to_owned())?
}

async fn open_now(networks: &WebhookNetworks, url: &str) -> Result<Socket, String> {
    let mut parsed =
        reqwest::Url::parse(url).map_err(|_| "the gateway URL does not parse".to_owned())?;
    let tls = match parsed.scheme() {
        "wss" => true,
        "ws" => false,
        _ => return Err("the gateway URL is not ws: or wss:".to_owned()),
    };
    parsed.set_query(Some("v=10&encoding=json"));
    let host = parsed
        .host_str()
        .ok_or_else(|| "the gateway URL names no host".to_owned())?
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
        .map_err(|e| format!("the gateway request: {e}"))?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let (socket, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map_err(|e| format!("the gateway's upgrade: {e}"))?;
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
