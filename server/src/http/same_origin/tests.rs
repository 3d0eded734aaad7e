//! The same-origin policy, request by request: hosts, origins, fetch metadata.

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
