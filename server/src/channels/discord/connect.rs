//! Opening the gateway's WebSocket at a URL Discord handed back, through
//! the channels' policy-checked [`websocket`](crate::channels::websocket),
//! with the gateway's query (`v=10&encoding=json`).

use std::time::Duration;

pub(super) use crate::channels::websocket::Socket;
use crate::resume::WebhookNetworks;

/// How long connecting (TCP, TLS and the upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The largest gateway message read: a dispatch is a few kilobytes, a
/// READY with many guilds more; far below tungstenite's 64 MiB.
const MAX_MESSAGE: usize = 4 << 20;

/// Opens the gateway at `url`, connecting only to an address `networks`
/// admits.
///
/// # Errors
/// Why not, without the URL.
pub(super) async fn open(networks: &WebhookNetworks, url: &str) -> Result<Socket, String> {
    let mut parsed =
        reqwest::Url::parse(url).map_err(|_| "the gateway URL does not parse".to_owned())?;
    parsed.set_query(Some("v=10&encoding=json"));
    let opening = crate::channels::websocket::open(networks, parsed.as_str(), MAX_MESSAGE);
    tokio::time::timeout(CONNECT_TIMEOUT, opening)
        .await
        .map_err(|_| "the gateway did not answer in time".to_owned())?
}
