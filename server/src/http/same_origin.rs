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

use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Method};
use axum::middleware::Next;
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

/// The middleware: refuses with 403 before routing.
pub async fn enforce(
    State(policy): State<std::sync::Arc<SameOrigin>>,
    request: Request,
    next: Next,
) -> Response {
    match policy.check(
        request.method(),
        request.uri().authority(),
        request.headers(),
    ) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            tracing::debug!(
                ?refusal,
                route = super::route::of(&request),
                "refused a request from elsewhere"
            );
            Error::from(refusal).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    fn check(
        policy: &SameOrigin,
        method: &Method,
        pairs: &[(&'static str, &str)],
    ) -> Result<(), Refusal> {
        policy.check(method, None, &headers(pairs))
    }

    #[test]
    fn host_must_be_localhost_an_address_or_allowed() {
        let policy = SameOrigin::new(&["Clarify.Example.com".into()], None, None);
        for host in [
            "localhost",
            "localhost:7420",
            "LOCALHOST.",
            "127.0.0.1:7420",
            "[::1]:7420",
            "192.168.1.20",
            "clarify.example.com",
            "clarify.example.com:443",
        ] {
            assert_eq!(
                check(&policy, &Method::POST, &[("host", host)]),
                Ok(()),
                "{host}"
            );
        }
        for host in [
            "rebind.evil:7420",
            "localhost.evil",
            "127.0.0.1.nip.io",
            "example.com",
        ] {
            assert_eq!(
                check(&policy, &Method::GET, &[("host", host)]),
                Err(Refusal::ForeignHost),
                "{host}"
            );
        }
        assert_eq!(
            check(&policy, &Method::GET, &[]),
            Ok(()),
            "no Host: no browser"
        );
    }

    #[test]
    fn origin_must_be_this_server_or_the_cors_origin() {
        let policy = SameOrigin::new(
            &["clarify.example.com".into()],
            Some("http://localhost:3000/"),
            Some("http://127.0.0.1:7622"),
        );
        let ok = [
            ("127.0.0.1:7420", "http://127.0.0.1:7420"),
            ("localhost:7420", "http://localhost:7420"),
            ("clarify.example.com", "https://clarify.example.com"),
            ("127.0.0.1:7420", "https://clarify.example.com"),
            ("127.0.0.1:7420", "http://localhost:3000"),
            ("127.0.0.1:7420", "http://127.0.0.1:7622"),
            ("127.0.0.1:7622", "http://127.0.0.1:7622"),
        ];
        for (host, origin) in ok {
            let result = check(
                &policy,
                &Method::POST,
                &[("host", host), ("origin", origin)],
            );
            assert_eq!(result, Ok(()), "{origin} → {host}");
        }
        let refused = [
            ("127.0.0.1:7420", "https://evil.example"),
            ("127.0.0.1:7420", "http://127.0.0.1:3000"),
            ("localhost:7420", "http://localhost:8080"),
            ("127.0.0.1:7420", "null"),
            ("127.0.0.1:7420", "http://localhost:3001"),
            ("clarify.example.com", "https://example.com"),
            // P1 (issue 45 item 7): the host alone is not the origin.
            ("127.0.0.1:7622", "http://127.0.0.1:8888"),
            ("127.0.0.1:7420", "http://127.0.0.1"),
            ("127.0.0.1:7420", "https://127.0.0.1:7622"),
            ("127.0.0.1:7420", "https://clarify.example.com:8443"),
            ("clarify.example.com", "http://clarify.example.com:8080"),
        ];
        for (host, origin) in refused {
            for method in [Method::GET, Method::POST] {
                let result = check(&policy, &method, &[("host", host), ("origin", origin)]);
                assert_eq!(result, Err(Refusal::ForeignOrigin), "{origin} → {host}");
            }
        }
    }

    #[test]
    fn cross_site_fetch_metadata_refuses_state_changes_only() {
        let policy = SameOrigin::default();
        let cross = [("host", "127.0.0.1:7420"), ("sec-fetch-site", "cross-site")];
        assert_eq!(
            check(&policy, &Method::POST, &cross),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            check(&policy, &Method::PATCH, &cross),
            Err(Refusal::ForeignOrigin)
        );
        assert_eq!(
            check(&policy, &Method::GET, &cross),
            Ok(()),
            "a link followed to a page"
        );
        let same = [
            ("host", "127.0.0.1:7420"),
            ("sec-fetch-site", "same-origin"),
        ];
        assert_eq!(check(&policy, &Method::POST, &same), Ok(()));
    }

    /// Issue 45 item 1: the answer link's page withholds its referrer, so
    /// its Confirm posts `Origin: null`; fetch metadata says it is ours.
    #[test]
    fn a_null_origin_is_admitted_only_when_fetched_from_our_own_page() {
        let policy = SameOrigin::default();
        let ours = [
            ("host", "127.0.0.1:7420"),
            ("origin", "null"),
            ("sec-fetch-site", "same-origin"),
        ];
        assert_eq!(check(&policy, &Method::POST, &ours), Ok(()));
        for site in ["cross-site", "same-site", "none"] {
            let theirs = [
                ("host", "127.0.0.1:7420"),
                ("origin", "null"),
                ("sec-fetch-site", site),
            ];
            assert_eq!(
                check(&policy, &Method::POST, &theirs),
                Err(Refusal::ForeignOrigin),
                "{site}"
            );
        }
    }
}
