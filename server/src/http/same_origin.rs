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
    /// `--allowed-host` names, lowercase, without a trailing dot.
    hosts: Vec<String>,
    /// `--cors-origin`, exactly.
    cors_origin: Option<String>,
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
    /// requests from `cors_origin`'s pages besides our own.
    #[must_use]
    pub fn new(hosts: &[String], cors_origin: Option<&str>) -> Self {
        Self {
            hosts: hosts.iter().map(|h| normalize_host(h)).collect(),
            cors_origin: cors_origin.map(|o| o.trim_end_matches('/').to_owned()),
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
                if self.admits_origin(origin, host.as_ref()) {
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
    /// the host the request was sent to), the `--cors-origin`, and pages
    /// served under an `--allowed-host` name (behind a proxy that rewrites
    /// `Host`).
    fn admits_origin(&self, origin: &str, host: Option<&Authority>) -> bool {
        let origin = origin.trim_end_matches('/');
        if self.cors_origin.as_deref() == Some(origin) {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false; // `null`: a sandboxed or file page
        };
        let Ok(authority) = rest.parse::<Authority>() else {
            return false;
        };
        let default_port = match scheme.to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        let origin_host = normalize_host(authority.host());
        if let Some(host) = host
            && normalize_host(host.host()) == origin_host
        {
            // A proxy may drop the port from Host; then only a default-port
            // origin (what a proxied page has) matches.
            let same_port = match host.port_u16() {
                Some(port) => port == authority.port_u16().unwrap_or(default_port),
                None => authority.port_u16().is_none(),
            };
            if same_port {
                return true;
            }
        }
        self.hosts.contains(&origin_host)
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
        let policy = SameOrigin::new(&["Clarify.Example.com".into()], None);
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
        );
        let ok = [
            ("127.0.0.1:7420", "http://127.0.0.1:7420"),
            ("localhost:7420", "http://localhost:7420"),
            ("clarify.example.com", "https://clarify.example.com"),
            ("127.0.0.1:7420", "https://clarify.example.com"),
            ("127.0.0.1:7420", "http://localhost:3000"),
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
}
