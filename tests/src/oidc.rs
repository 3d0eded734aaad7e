//! A real OpenID provider for the sign-in tests (issue 49 item 3): panva's
//! `oidc-provider` run by `e2e/oidc/provider.mjs` (`npm ci` in that folder
//! first), and a browser's way through it, driven over HTTP: start at
//! Clarify, sign in at the provider, and stop where the provider sends the
//! browser back, so a test can bring that back as it is, altered, or twice.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use crate::TestServer;

/// Clarify's client at the provider.
pub const CLIENT_ID: &str = "clarify";
/// Its secret.
pub const CLIENT_SECRET: &str = "clarify-test-secret";

/// The provider, killed when dropped.
#[derive(Debug)]
pub struct Provider {
    child: Child,
    /// Its issuer URL (`http://127.0.0.1:PORT`).
    pub issuer: String,
}

impl Provider {
    /// Starts the provider with Clarify's client sending browsers back to
    /// `redirect_uri`, and `env` besides (`OIDC_ID_TOKEN_AUDIENCE`,
    /// `OIDC_STALE_KEYS`); returns once it has said its issuer.
    ///
    /// # Panics
    /// When node or the provider's packages are missing.
    #[must_use]
    pub fn start(redirect_uri: &str, env: &[(&str, &str)]) -> Self {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../e2e/oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .env("OIDC_CLIENT_ID", CLIENT_ID)
            .env("OIDC_CLIENT_SECRET", CLIENT_SECRET)
            .env("OIDC_REDIRECT_URI", redirect_uri)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node e2e/oidc/provider.mjs (run `npm ci` in e2e/oidc)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the provider's issuer line");
        assert!(
            line.starts_with("http://127.0.0.1:"),
            "the provider did not start (is e2e/oidc/node_modules installed?): {line:?}"
        );
        Self {
            child,
            issuer: line.trim().to_owned(),
        }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the provider sent the browser back, not yet followed.
#[derive(Debug, Clone)]
pub struct Back {
    /// The callback URL with its `code`, `state` and `iss`.
    pub url: String,
    /// The `Cookie` header the browser sends Clarify with it (the pending
    /// sign-in).
    pub cookie: String,
}

/// The value of cookie `name` among `response`'s `Set-Cookie`s, if set.
#[must_use]
pub fn set_cookie(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next()?.split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_owned())
}

/// Starts a sign-in at `clarify`, signs in at the provider as `login`, and
/// returns where the provider sends the browser back.
///
/// # Panics
/// When a step answers other than a browser expects.
pub async fn sign_in_at_provider(clarify: &TestServer, login: &str) -> Back {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let start = http
        .get(clarify.url("/api/v1/auth/oidc/start"))
        .send()
        .await
        .expect("start");
    assert_eq!(start.status(), 302, "start");
    let pending = set_cookie(&start, "clarify_oidc").expect("the pending cookie");
    let mut next = location(&start, &clarify.url(""));
    let mut jar: BTreeMap<String, String> = BTreeMap::new();
    let callback = clarify.url("/api/v1/auth/oidc/callback");
    for _ in 0..10 {
        if next.starts_with(&callback) {
            return Back {
                url: next,
                cookie: format!("clarify_oidc={pending}"),
            };
        }
        let page = http
            .get(&next)
            .header("cookie", cookies(&jar))
            .send()
            .await
            .expect("the provider");
        keep(&mut jar, &page);
        if page.status().is_redirection() {
            next = location(&page, &next);
            continue;
        }
        // The provider's sign-in form: any login, any password.
        assert_eq!(page.status(), 200, "the provider's page at {next}");
        let body = page.text().await.expect("the form");
        assert!(body.contains("name=\"login\""), "a sign-in form: {body}");
        let signed = http
            .post(&next)
            .header("cookie", cookies(&jar))
            .form(&[("prompt", "login"), ("login", login), ("password", "any")])
            .send()
            .await
            .expect("sign in");
        keep(&mut jar, &signed);
        assert!(
            signed.status().is_redirection(),
            "signed in: {}",
            signed.status()
        );
        next = location(&signed, &next);
    }
    panic!("the provider never sent the browser back (last at {next})");
}

fn location(response: &reqwest::Response, base: &str) -> String {
    let to = response.headers()["location"].to_str().expect("location");
    reqwest::Url::parse(base)
        .and_then(|base| base.join(to))
        .expect("a URL")
        .to_string()
}

fn keep(jar: &mut BTreeMap<String, String>, response: &reqwest::Response) {
    for value in response.headers().get_all("set-cookie") {
        let Some((name, value)) = value
            .to_str()
            .ok()
            .and_then(|v| v.split(';').next())
            .and_then(|pair| pair.split_once('='))
        else {
            continue;
        };
        jar.insert(name.trim().to_owned(), value.to_owned());
    }
}

fn cookies(jar: &BTreeMap<String, String>) -> String {
    jar.iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("; ")
}
