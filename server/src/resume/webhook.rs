//! Resume webhooks: one POST, no redirects, no proxy, and only to addresses
//! the network policy admits — checked on the address connected to, after
//! name resolution, so DNS cannot rebind a public name onto an internal one.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::network::WebhookNetworks;

/// The most of a chat API's answer that is read.
pub const MAX_ANSWER: usize = 256 * 1024;

/// How long a webhook has to accept a resume.
pub const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// The client every webhook is sent with.
///
/// # Panics
/// When the TLS backend cannot start (a broken build, not a runtime state).
#[must_use]
fn client(networks: &WebhookNetworks) -> reqwest::Client {
    guarded(networks)
        .timeout(WEBHOOK_TIMEOUT)
        .build()
        .expect("the HTTP client's TLS backend starts")
}

/// The client a subscription (a stream that stays open) is read with: the
/// same guards, no bound on the whole exchange, only on each wait for more
/// (a peer's keepalives come well within it).
///
/// # Panics
/// As [`client`].
#[must_use]
fn stream_client(networks: &WebhookNetworks) -> reqwest::Client {
    guarded(networks)
        .connect_timeout(WEBHOOK_TIMEOUT)
        .read_timeout(STREAM_IDLE)
        .build()
        .expect("the HTTP client's TLS backend starts")
}

/// How long a subscription may stay silent before it counts as dropped.
pub const STREAM_IDLE: Duration = Duration::from_secs(120);

fn guarded(networks: &WebhookNetworks) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        // A redirect would be a second, unchecked request.
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would connect on our behalf to an address never checked.
        .no_proxy()
        .dns_resolver(Arc::new(Guarded(networks.clone())))
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
pub(super) fn literal_admitted(networks: &WebhookNetworks, url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse() else {
        return true;
    };
    let port = url.port_or_known_default().unwrap_or(0);
    networks.admits_socket(SocketAddr::new(ip, port))
}

/// The guarded client and the policy it sends under: what resume and
/// notification webhooks both go through.
#[derive(Debug, Clone)]
pub struct Webhooks {
    pub(super) networks: WebhookNetworks,
    pub(super) http: reqwest::Client,
    pub(super) stream: reqwest::Client,
}

/// How a POST to a webhook went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// It answered 2xx.
    Accepted,
    /// It answered otherwise, or could not be reached: worth another try.
    Failed,
    /// Its URL does not parse or names an address the policy refuses: no
    /// try will ever reach it.
    Refused,
}

impl Webhooks {
    /// A client bounded by `networks`.
    #[must_use]
    pub fn new(networks: WebhookNetworks) -> Self {
        let http = client(&networks);
        let stream = stream_client(&networks);
        Self {
            networks,
            http,
            stream,
        }
    }

    /// Checks a webhook URL given by a caller: http(s), and not naming an
    /// address the policy refuses (named hosts are checked again each time
    /// they resolve).
    ///
    /// # Errors
    /// A message naming `field`.
    pub fn check(&self, field: &str, url: &str) -> Result<(), String> {
        let url = parse_url(field, url)?;
        if literal_admitted(&self.networks, &url) {
            Ok(())
        } else {
            Err(format!(
                "{field}: may not point at a loopback, private or link-local address (the \
                 operator allows networks with --allow-webhook-network)"
            ))
        }
    }

    /// POSTs `body` (JSON) to `webhook_url` with `headers`; `what` names
    /// the request in the log. The policy is checked again: it may have
    /// changed since the URL was given.
    pub async fn post(
        &self,
        webhook_url: &str,
        body: String,
        headers: &[(&'static str, &str)],
        what: &str,
    ) -> Sent {
        let Ok(url) = reqwest::Url::parse(webhook_url) else {
            tracing::warn!(what, "webhook URL no longer parses");
            return Sent::Refused;
        };
        if !literal_admitted(&self.networks, &url) {
            tracing::warn!(
                what,
                "webhook refused: its address is not one webhooks may reach"
            );
            return Sent::Refused;
        }
        let mut request = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        // The body is never read: only the status counts, and an endless or
        // huge answer costs nothing.
        match request.send().await {
            Ok(response) if response.status().is_success() => Sent::Accepted,
            Ok(response) => {
                tracing::warn!(what, status = %response.status(), "webhook refused");
                Sent::Failed
            }
            Err(error) => {
                // Without the URL: a Slack or Mattermost webhook's URL is
                // its secret.
                let error = error.without_url();
                tracing::warn!(what, %error, "webhook failed");
                Sent::Failed
            }
        }
    }

    /// The network policy this client sends under: what a WebSocket a
    /// peer names (Discord's gateway) is held to as well.
    #[must_use]
    pub fn networks(&self) -> &WebhookNetworks {
        &self.networks
    }
}

/// The webhook URLs taken, as one regular expression that the server
/// checks and the OpenAPI document states (`pattern`), so the two never
/// disagree (Schemathesis found each gap of a looser check): `http://` or
/// `https://`; a host name (labels of letters, digits and inner hyphens,
/// the last starting with a letter, so that no name reads as an address:
/// `163.com` is a name, `1.2.3` would be an IPv4 address to the parser), an
/// IPv4 address, or an IPv6 one in brackets (which the parser then checks
/// in full); an optional port up to 65535; then any printable ASCII after
/// `/`, `?` or `#`. No user info, no underscore, no backslash. Addresses
/// still meet the network policy.
pub const URL_PATTERN: &str = concat!(
    r"[Hh][Tt][Tt][Pp][Ss]?://",
    r"(?:(?:[A-Za-z0-9](?:-?[A-Za-z0-9])*\.)*[A-Za-z](?:-?[A-Za-z0-9])*",
    r"|\[[0-9A-Fa-f:.]{2,45}\]",
    r"|(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))",
    r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?",
    r"(?:[/?#][!-~]*)?",
);

static URL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(&format!("^(?:{URL_PATTERN})$")).expect("the webhook URL pattern compiles")
});

/// Parses a webhook URL as a caller wrote it: only printable ASCII (the URL
/// parser would quietly drop or percent-encode a space, a tab or a
/// non-ASCII letter, and store some other URL than the one pasted), in the
/// shape [`URL_PATTERN`] states.
///
/// # Errors
/// A message naming `field`.
pub fn parse_url(field: &str, url: &str) -> Result<reqwest::Url, String> {
    if let Some(c) = url.chars().find(|c| !matches!(c, '!'..='~')) {
        return Err(format!(
            "{field}: {c:?} is not allowed in a URL (printable ASCII only, no spaces; \
             percent-encode anything else)"
        ));
    }
    if !URL.is_match(url) {
        return Err(format!(
            "{field}: must be an http:// or https:// URL with a host name of letters, digits \
             and hyphens or an IPv4 address, an optional port, then a path (no user info)"
        ));
    }
    reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| format!("{field}: must be an http:// or https:// URL"))
}
