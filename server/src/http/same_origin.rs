//! Only this server's own pages and tools reach it. Two browser attacks are
//! stopped here, before any handler runs, on every route:
//!
//! - **DNS rebinding**: a page at `evil.example` whose name is re-pointed at
//!   127.0.0.1 talks to us as its own origin. Its requests carry
//!   `Host: evil.example`, so only `localhost`, IP addresses (a page served
//!   from an address is this server's own origin) and the operator's
//!   `--allowed-host` names are answered.
//! - **Cross-site requests**: a foreign page can send a form POST or open a
//!   WebSocket without any CORS preflight. Browsers say where such a
//!   request comes from in `Origin` (and `Sec-Fetch-Site`), so one from
//!   anywhere but this server itself or the `--cors-origin` is refused.
//!   Tools send no `Origin` and are served.

use axum::extract::Request;
use axum::http::header::{HOST, ORIGIN};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse as _, Response};

use super::error::Error;

/// Who may reach the server, from its configuration.
#[derive(Debug, Clone, Default)]
pub struct SameOrigin {
    /// Names answered as `Host` besides localhost and addresses: the
    /// `--allowed-host` names and `--public-url`'s host, lowercase, without
    /// a trailing dot.
    hosts: Vec<String>,
    /// `--allowed-host` names alone: their pages (behind a proxy that
    /// rewrites `Host`) are on their scheme's default port.
    proxied: Vec<String>,
    /// Origins admitted exactly (scheme, host and port): `--cors-origin`
    /// and `--public-url`'s.
    origins: Vec<Origin>,
}

/// A web origin as compared: scheme, host and port, the port made explicit
/// (issue 45 item 7 P1: comparing the host alone let a page on another
/// port of the same machine in).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// `scheme://host[:port]` as a browser sends it (a trailing `/`, as in a
    /// configured URL, and a path are ignored); `None` for `null` and every
    /// scheme but http(s).
    fn parse(text: &str) -> Option<Self> {
        let (scheme, rest) = text.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = rest.split('/').next()?.parse::<Authority>().ok()?;
        Some(Self {
            host: normalize_host(authority.host()),
            port: authority.port_u16().unwrap_or(default_port),
            scheme,
        })
    }

    fn on_default_port(&self) -> bool {
        matches!(
            (self.scheme.as_str(), self.port),
            ("http", 80) | ("https", 443)
        )
    }
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The `Host` header names somebody else.
    ForeignHost,
    /// The request comes from another site's page.
    ForeignOrigin,
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::ForeignHost => Self::Forbidden(
                "Host: this server does not answer to that name (its operator can allow \
                 one with --allowed-host)",
            ),
            Refusal::ForeignOrigin => {
                Self::Forbidden("Origin: requests from other sites' pages are refused")
            }
        }
    }
}

impl SameOrigin {
    /// A policy admitting `hosts` besides localhost and addresses, and
    /// requests from `cors_origin`'s and `public_url`'s pages besides our
    /// own.
    #[must_use]
    pub fn new(hosts: &[String], cors_origin: Option<&str>, public_url: Option<&str>) -> Self {
        let proxied: Vec<String> = hosts.iter().map(|h| normalize_host(h)).collect();
        let public = public_url.and_then(Origin::parse);
        // The name people reach the server by is its own: Slack's and
        // Telegram's callbacks, and answer links, arrive with it as `Host`.
        let hosts = proxied
            .iter()
            .cloned()
            .chain(public.iter().map(|o| o.host.clone()))
            .collect();
        Self {
            hosts,
            proxied,
            origins: cors_origin
                .and_then(Origin::parse)
                .into_iter()
                .chain(public)
                .collect(),
        }
    }

    /// Checks one request's `Host`, `Origin` and `Sec-Fetch-Site`.
    ///
    /// # Errors
    /// The first rule the request breaks.
    pub fn check(
        &self,
        method: &Method,
        authority: Option<&Authority>,
        headers: &HeaderMap,
    ) -> Result<(), Refusal> {
        let host = headers
            .get(HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<Authority>().ok())
            .or_else(|| authority.cloned());
        // A request without any Host is no browser's (HTTP/1.1 requires one).
        if let Some(host) = &host
            && !self.answers_to(host.host())
        {
            return Err(Refusal::ForeignHost);
        }
        match headers.get(ORIGIN) {
            Some(origin) => {
                let origin = origin.to_str().unwrap_or_default();
                // A page whose referrer policy withholds its origin sends
                // `null`; the browser's fetch metadata still says whether it
                // is ours (issue 45 item 1: the answer link's Confirm).
                let vouched = origin == "null" && fetched_same_origin(headers);
                if vouched || self.admits_origin(origin, host.as_ref()) {
                    Ok(())
                } else {
                    Err(Refusal::ForeignOrigin)
                }
            }
            // Browsers send Origin on every state-changing request; should
            // one not, its fetch metadata still says where it came from.
            None if !is_safe(method) && fetched_cross_site(headers) => Err(Refusal::ForeignOrigin),
            None => Ok(()),
        }
    }

    /// Whether `host` (from a `Host` header) names this server.
    fn answers_to(&self, host: &str) -> bool {
        let host = normalize_host(host);
        host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok()
            || self.hosts.contains(&host)
    }

    /// Whether a page of `origin` may call us: our own pages (the origin is
    /// the host the request was sent to), the `--cors-origin` and the
    /// `--public-url`, and pages served under an `--allowed-host` name on
    /// its scheme's default port (behind a proxy that rewrites `Host`).
    fn admits_origin(&self, origin: &str, host: Option<&Authority>) -> bool {
        // `null`: a sandboxed or file page, or a page that sends no
        // referrer (its own fetch metadata may still vouch for it).
        let Some(origin) = Origin::parse(origin) else {
            return false;
        };
        if let Some(host) = host
            && normalize_host(host.host()) == origin.host
        {
            // A proxy may drop the port from Host; then only a default-port
            // origin (what a proxied page has) matches.
            let same_port = match host.port_u16() {
                Some(port) => port == origin.port,
                None => origin.on_default_port(),
            };
            if same_port {
                return true;
            }
        }
        self.origins.contains(&origin)
            || (origin.on_default_port() && self.proxied.contains(&origin.host))
    }
}

/// GET, HEAD and OPTIONS change nothing here.
fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

fn fetched_cross_site(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"))
}

fn fetched_same_origin(headers: &HeaderMap) -> bool {
    headers
        .get("sec-fetch-site")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"same-origin"))
}

fn normalize_host(host: &str) -> String {
    host.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// The layer: refuses with 403 before the route runs.
pub fn layer(
    policy: SameOrigin,
) -> super::gate::Gate<
    super::gate::Check<impl Fn(&Request) -> Option<Response> + Clone + Send + Sync + 'static>,
> {
    let policy = std::sync::Arc::new(policy);
    super::gate::Gate(super::gate::Check(move |request: &Request| {
        let refusal = policy
            .check(
                request.method(),
                request.uri().authority(),
                request.headers(),
            )
            .err()?;
        tracing::debug!(
            ?refusal,
            route = super::route::of(request),
            "refused a request from elsewhere"
        );
        Some(Error::from(refusal).into_response())
    }))
}

#[cfg(test)]
mod tests;
