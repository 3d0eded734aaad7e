//! Resume webhooks: one POST, no redirects, no proxy, and only to addresses
//! the network policy admits — checked on the address connected to, after
//! name resolution, so DNS cannot rebind a public name onto an internal one.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::ResumePayload;
use super::network::WebhookNetworks;

/// How long a webhook has to accept a resume.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The client every webhook is sent with.
///
/// # Panics
/// When the TLS backend cannot start (a broken build, not a runtime state).
#[must_use]
pub fn client(networks: &WebhookNetworks) -> reqwest::Client {
    reqwest::Client::builder()
        // A redirect would be a second, unchecked request.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would connect on our behalf to an address never checked.
        .no_proxy()
        .dns_resolver(Arc::new(Guarded(networks.clone())))
        .timeout(WEBHOOK_TIMEOUT)
        .build()
        .expect("the HTTP client's TLS backend starts")
}

/// Resolves names, keeping only the addresses the policy admits.
struct Guarded(WebhookNetworks);

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let networks = self.0.clone();
        Box::pin(async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let admitted: Vec<SocketAddr> = found.filter(|a| networks.admits(a.ip())).collect();
            if admitted.is_empty() {
                return Err(format!(
                    "{} resolves to no address webhooks may reach",
                    name.as_str()
                )
                .into());
            }
            Ok(Box::new(admitted.into_iter()) as Addrs)
        })
    }
}

/// Whether `url`, when it names an address literally (no resolution
/// happens then), names one the policy admits. Named hosts are checked by
/// the resolver.
#[must_use]
pub fn literal_admitted(networks: &WebhookNetworks, url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse() else {
        return true;
    };
    let port = url.port_or_known_default().unwrap_or(0);
    networks.admits_socket(SocketAddr::new(ip, port))
}

/// POSTs the resume; `true` when the webhook answered 2xx.
pub async fn send(
    client: &reqwest::Client,
    networks: &WebhookNetworks,
    webhook_url: &str,
    payload: &ResumePayload<'_>,
) -> bool {
    let pending_id = payload.pending_id;
    let Ok(url) = reqwest::Url::parse(webhook_url) else {
        tracing::warn!(pending_id, "resume webhook URL no longer parses");
        return false;
    };
    if !literal_admitted(networks, &url) {
        tracing::warn!(
            pending_id,
            "resume webhook refused: its address is not one webhooks may reach"
        );
        return false;
    }
    // The body is never read: only the status counts, and an endless or
    // huge answer costs nothing.
    match client.post(url).json(payload).send().await {
        Ok(response) if response.status().is_success() => true,
        Ok(response) => {
            tracing::warn!(pending_id, status = %response.status(), "resume webhook refused");
            false
        }
        Err(error) => {
            tracing::warn!(pending_id, %error, "resume webhook failed");
            false
        }
    }
}
