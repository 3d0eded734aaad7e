//! Sign-in with the team's OpenID provider (issue 49 item 3), against a
//! real one (`e2e/oidc/provider.mjs`, panva's oidc-provider): the browser
//! gets the same HttpOnly session cookie as a token login; a forged state, a
//! replayed code, a token for another audience and a missing pending sign-in
//! are refused with a 4xx naming what failed and no session; the provider's
//! rotated keys are fetched again; a provider's name never takes over an
//! existing user; the flags refuse to start without --auth and --public-url.

use clarify_server::Config;
use clarify_server::oidc::{CALLBACK_PATH, Settings};
use clarify_tests::TestServer;
use clarify_tests::oidc::{
    Back, CLIENT_ID, CLIENT_SECRET, Provider, set_cookie, sign_in_at_provider,
};
use serde_json::Value;
use tokio::net::TcpListener;

/// Clarify (auth on) signing in with a provider started with `env`.
async fn clarify_with_provider(env: &[(&str, &str)]) -> (TestServer, Provider) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let public_url = format!("http://{}", listener.local_addr().unwrap());
    let provider = Provider::start(&format!("{public_url}{CALLBACK_PATH}"), env);
    let config = Config {
        auth: true,
        public_url: Some(public_url.clone()),
        // The provider is on loopback: admitted as an operator admits theirs.
        allowed_webhook_networks: vec!["127.0.0.1/32".parse().unwrap()],
        oidc: Some(Settings {
            issuer: provider.issuer.clone(),
            client_id: CLIENT_ID.into(),
            client_secret: Some(clarify_server::ids::Secret(CLIENT_SECRET.into())),
            redirect_uri: format!("{public_url}{CALLBACK_PATH}"),
        }),
        ..Config::default()
    };
    (TestServer::start_bound(listener, config).await, provider)
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Brings `back` to Clarify as the browser would, with `cookie`.
async fn come_back(url: &str, cookie: &str) -> reqwest::Response {
    browser()
        .get(url)
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
}

async fn me(server: &TestServer, session: &str) -> Value {
    browser()
        .get(server.url("/api/v1/auth/me"))
        .header("cookie", format!("clarify_session={session}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A refusal: 4xx, the message naming `what`, no session cookie, the
/// pending sign-in spent.
async fn assert_refused(response: reqwest::Response, what: &str) {
    let status = response.status();
    assert_eq!(status, 400, "refused");
    assert_eq!(set_cookie(&response, "clarify_session"), None, "no session");
    assert_eq!(
        set_cookie(&response, "clarify_oidc").as_deref(),
        Some(""),
        "the pending sign-in is spent"
    );
    let body: Value = response.json().await.unwrap();
    let message = body["error"].as_str().unwrap();
    assert!(message.starts_with(what), "{what}: {message}");
}

/// issue 49 item 3: signed in through the provider, the browser holds the
/// same session cookie as after a token login; the user is made from `sub`
/// and named by `preferred_username`, and found again by `sub`; logout ends it.
#[tokio::test]
async fn signing_in_through_the_provider_gives_the_session_cookie() {
    let (server, _provider) = clarify_with_provider(&[]).await;
    let back = sign_in_at_provider(&server, "ada").await;
    let signed = come_back(&back.url, &back.cookie).await;
    assert_eq!(signed.status(), 303);
    assert_eq!(signed.headers()["location"], "/");
    let set: Vec<&str> = signed
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    let session = set
        .iter()
        .find(|c| c.starts_with("clarify_session=clk_web_"))
        .expect("the session cookie");
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Lax"),
        "{session}"
    );
    let secret = set_cookie(&signed, "clarify_session").unwrap();
    let who = me(&server, &secret).await;
    assert_eq!(who["user"]["name"], "ada", "{who}");

    // The same person again: the same user, found by sub.
    let again = sign_in_at_provider(&server, "ada").await;
    let again = come_back(&again.url, &again.cookie).await;
    let second = set_cookie(&again, "clarify_session").unwrap();
    assert_eq!(me(&server, &second).await["user"]["id"], who["user"]["id"]);

    // Logout ends the browser's session as it does a token login's.
    let out = browser()
        .post(server.url("/api/v1/auth/logout"))
        .header("cookie", format!("clarify_session={secret}"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 200);
    assert_eq!(me(&server, &secret).await["user"], Value::Null);
}

/// issue 49 item 3: a `state` other than the one this browser was given is
/// refused before the code is used.
#[tokio::test]
async fn a_forged_state_is_refused() {
    let (server, _provider) = clarify_with_provider(&[]).await;
    let back = sign_in_at_provider(&server, "ada").await;
    let mut url = reqwest::Url::parse(&back.url).unwrap();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == "state" {
                "forged".into()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    assert_refused(come_back(url.as_str(), &back.cookie).await, "state:").await;
    // Nor does the real way back work in a browser that started nothing.
    assert_refused(come_back(&back.url, "other=1").await, "state:").await;
}

/// issue 49 item 3: a code brought back a second time (the provider refuses
/// its second exchange) signs nobody in.
#[tokio::test]
async fn a_replayed_code_is_refused() {
    let (server, _provider) = clarify_with_provider(&[]).await;
    let Back { url, cookie } = sign_in_at_provider(&server, "ada").await;
    assert_eq!(come_back(&url, &cookie).await.status(), 303);
    assert_refused(come_back(&url, &cookie).await, "code:").await;
}

/// issue 49 item 3: an ID token the provider signed for another client
/// (`aud`) is refused.
#[tokio::test]
async fn an_id_token_for_another_audience_is_refused() {
    let env = [("OIDC_ID_TOKEN_AUDIENCE", "other-client")];
    let (server, _provider) = clarify_with_provider(&env).await;
    let back = sign_in_at_provider(&server, "ada").await;
    assert_refused(
        come_back(&back.url, &back.cookie).await,
        "id_token: made for another client",
    )
    .await;
}

/// issue 49 item 3: keys the provider rotated in after Clarify read them
/// are fetched again when a token names one.
#[tokio::test]
async fn keys_rotated_after_discovery_are_fetched_again() {
    let (server, _provider) = clarify_with_provider(&[("OIDC_STALE_KEYS", "first")]).await;
    let back = sign_in_at_provider(&server, "ada").await;
    let signed = come_back(&back.url, &back.cookie).await;
    assert_eq!(signed.status(), 303, "{:?}", signed.text().await);
}

/// issue 49 item 3: tokens naming a key the provider never lists make
/// Clarify fetch the keys again once, not once per token: a stream of
/// forged `kid`s cannot turn the server against the provider.
#[tokio::test]
async fn unknown_keys_are_fetched_again_at_most_once_in_a_while() {
    let (server, provider) = clarify_with_provider(&[("OIDC_STALE_KEYS", "always")]).await;
    for _ in 0..3 {
        let back = sign_in_at_provider(&server, "ada").await;
        let refused = come_back(&back.url, &back.cookie).await;
        assert_refused(refused, "id_token: not signed by the provider's keys").await;
    }
    let reads = reqwest::get(format!("{}/test/jwks-reads", provider.issuer))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // Discovery's read, and one more for the first unknown key.
    assert_eq!(reads, "2");
}

/// issue 49 item 3: a provider out of reach is a 502 naming it, and tokens
/// still sign in.
#[tokio::test]
async fn a_provider_out_of_reach_is_a_502() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let public_url = format!("http://{}", listener.local_addr().unwrap());
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let config = Config {
        auth: true,
        public_url: Some(public_url.clone()),
        allowed_webhook_networks: vec!["127.0.0.1/32".parse().unwrap()],
        oidc: Some(Settings {
            issuer,
            client_id: CLIENT_ID.into(),
            client_secret: None,
            redirect_uri: format!("{public_url}{CALLBACK_PATH}"),
        }),
        ..Config::default()
    };
    let server = TestServer::start_bound(listener, config).await;
    let start = browser()
        .get(server.url("/api/v1/auth/oidc/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 502);
    assert_eq!(set_cookie(&start, "clarify_oidc"), None);
    let body: Value = start.json().await.unwrap();
    assert_eq!(
        body["error"],
        "the identity provider cannot be reached now; try again later"
    );
    let token = server.token("bob").await;
    let cookie = server.login(&token).await;
    assert!(cookie.starts_with("clarify_session=clk_web_"), "{cookie}");
}

/// issue 49 item 3: `clarify serve` reads the provider at start-up and says
/// so under its listening line.
#[test]
fn the_listening_lines_say_whether_the_provider_was_read() {
    use std::io::{BufRead as _, BufReader};
    let provider = Provider::start("http://127.0.0.1:9/api/v1/auth/oidc/callback", &[]);
    let dir = std::env::temp_dir().join(format!("clarify-oidc-lines-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args(["serve", "--listen", "127.0.0.1:0", "--auth"])
        .args([
            "--public-url",
            "http://127.0.0.1:9",
            "--oidc-client-id",
            CLIENT_ID,
        ])
        .args(["--oidc-issuer", &provider.issuer])
        .args(["--allow-webhook-network", "127.0.0.1/32"])
        .env(
            "CLARIFY_DATABASE_URL",
            format!("sqlite://{}/c.db", dir.display()),
        )
        .env("CLARIFY_OIDC_CLIENT_SECRET", CLIENT_SECRET)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Read up to the provider's line (the lines under "listening on" are
    // written at once); an exit ends the reading too.
    let mut said = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let last = line.starts_with("  oidc:");
        said.push(line);
        if last {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        said[0].starts_with("listening on http://127.0.0.1:"),
        "{said:?}"
    );
    let expected = format!(
        "  oidc: sign-in with {} (/api/v1/auth/oidc/start)",
        provider.issuer
    );
    assert_eq!(said.last(), Some(&expected), "{said:?}");
}

/// issue 49 item 3: a provider's `preferred_username` that is another
/// user's name makes a user of its own, never that user.
#[tokio::test]
async fn a_provider_name_never_takes_over_an_existing_user() {
    let (server, _provider) = clarify_with_provider(&[]).await;
    let token = server.token("ada").await;
    let back = sign_in_at_provider(&server, "ada").await;
    let signed = come_back(&back.url, &back.cookie).await;
    let session = set_cookie(&signed, "clarify_session").unwrap();
    let who = me(&server, &session).await;
    assert_eq!(who["user"]["name"], "ada-2", "{who}");
    let (_, mine) = server.as_token(&token).get("/auth/me").await;
    assert_ne!(mine["user"]["id"], who["user"]["id"]);
}

/// issue 49 item 3: the page offers the provider's sign-in only when one is
/// configured; without, its routes are 404.
#[tokio::test]
async fn the_page_links_to_the_provider_only_when_configured() {
    let (server, provider) = clarify_with_provider(&[]).await;
    let page = browser().get(server.url("/login")).send().await.unwrap();
    let page = page.text().await.unwrap();
    let host = provider
        .issuer
        .trim_start_matches("http://")
        .split(':')
        .next()
        .unwrap();
    assert!(page.contains("href=\"/api/v1/auth/oidc/start\""), "{page}");
    assert!(page.contains(&format!("Sign in with {host}")), "{page}");

    let plain = TestServer::start_with_auth().await;
    let page = browser().get(plain.url("/login")).send().await.unwrap();
    assert!(!page.text().await.unwrap().contains("oidc"));
    let start = browser()
        .get(plain.url("/api/v1/auth/oidc/start"))
        .send()
        .await
        .unwrap();
    assert_eq!(start.status(), 404);
}

/// issue 49 item 3: `--oidc-issuer` refuses to start without `--auth`, a
/// `--public-url` or a client id, saying which.
#[test]
fn the_provider_flags_need_auth_public_url_and_client_id() {
    let run = |flags: &[&str]| {
        let dir = std::env::temp_dir().join(format!("clarify-oidc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--oidc-issuer",
                "https://id.example.com",
            ])
            .args(flags)
            .env(
                "CLARIFY_DATABASE_URL",
                format!("sqlite://{}/c.db", dir.display()),
            )
            .env_remove("CLARIFY_AUTH")
            .env_remove("CLARIFY_PUBLIC_URL")
            .output()
            .unwrap();
        assert!(!out.status.success(), "started with {flags:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = run(&[
        "--oidc-client-id",
        "c",
        "--public-url",
        "https://c.example.com",
    ]);
    assert!(said.contains("--oidc-issuer needs --auth"), "{said}");
    let said = run(&["--auth", "--oidc-client-id", "c"]);
    assert!(said.contains("--oidc-issuer needs --public-url"), "{said}");
    let said = run(&["--auth", "--public-url", "https://c.example.com"]);
    assert!(
        said.contains("--oidc-issuer needs --oidc-client-id"),
        "{said}"
    );
}
