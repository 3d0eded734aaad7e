//! Network hardening (issue 45 items 6 and 8a): a client that sends its
//! request slowly, or not at all, holds neither a connection's place nor
//! one of rmcp's turns for long, and a burst of idle connections is closed
//! whole. Each test is one of the reviewer's reproductions, on real
//! sockets, with the server's timeouts shortened where the point is that
//! they fire.

use std::time::{Duration, Instant};

use clarify_server::Config;
use clarify_tests::TestServer;
use clarify_tests::mcp::connect;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// The server's `host:port`.
fn addr(server: &TestServer) -> String {
    server
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A connection that sent `head` (a request line and headers, no blank
/// line) and `Expect: 100-continue`, a body of `length` announced and
/// `sent` of it written once the server asked for it (its `100 Continue`,
/// waited for at most `patience`). Whether the server asked.
async fn half_sent(
    addr: &str,
    head: &str,
    length: usize,
    sent: &[u8],
    patience: Duration,
) -> (TcpStream, bool) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "{head}\r\nHost: {addr}\r\nContent-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let asked = tokio::time::timeout(patience, async {
        let mut byte = [0_u8; 1];
        while !seen.ends_with(b"\r\n\r\n") {
            if tcp.read(&mut byte).await.unwrap_or(0) == 0 {
                return false;
            }
            seen.push(byte[0]);
        }
        seen.starts_with(b"HTTP/1.1 100")
    })
    .await
    .unwrap_or(false);
    if asked {
        tcp.write_all(sent).await.unwrap();
    }
    (tcp, asked)
}

/// What the server sent before closing `tcp`, or `None` if it was still
/// open at `until`; `drip`, if any, is written every 50 ms meanwhile.
async fn closed_by(tcp: &mut TcpStream, until: Instant, drip: Option<&[u8]>) -> Option<String> {
    let mut seen = Vec::new();
    let mut chunk = [0_u8; 1024];
    loop {
        let left = until.checked_duration_since(Instant::now())?;
        let wait = left.min(Duration::from_millis(50));
        match tokio::time::timeout(wait, tcp.read(&mut chunk)).await {
            Ok(Ok(0) | Err(_)) => return Some(String::from_utf8_lossy(&seen).into_owned()),
            Ok(Ok(n)) => seen.extend_from_slice(&chunk[..n]),
            Err(_) => {
                if let Some(drip) = drip
                    && tcp.write_all(drip).await.is_err()
                {
                    return Some(String::from_utf8_lossy(&seen).into_owned());
                }
            }
        }
    }
}

/// What the server answers to `head` announcing a 1 MB body it never
/// gets, closing the connection within 2 s.
async fn unread(addr: &str, head: &str) -> String {
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let head = format!("{head}Host: {addr}\r\nContent-Length: 1000000\r\n\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    let until = Instant::now() + Duration::from_secs(2);
    let said = closed_by(&mut tcp, until, None).await;
    said.expect("answered and closed with the body unread")
}

const LOGIN: &str = "POST /api/v1/auth/login HTTP/1.1\r\nContent-Type: application/json";

/// Issue 45 item 6 B2: 40 logins whose headers came and whose bodies never
/// did filled `--max-connections 40` for good, and `/healthz` was refused.
/// Now a connection waiting for its body gives way to a newcomer as an
/// idle one does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_waiting_for_their_bodies_give_way_to_a_newcomer() {
    let server = TestServer::start_with(Config {
        max_connections: Some(40),
        ..Config::default()
    })
    .await;
    let addr = addr(&server);
    let mut waiting = Vec::new();
    for _ in 0..40 {
        let (tcp, asked) = half_sent(&addr, LOGIN, 100, b"{\"to", Duration::from_secs(5)).await;
        assert!(asked, "the login reads its body");
        waiting.push(tcp);
    }
    // Deadlines with room for a loaded machine (this once failed at 2 s
    // while a build ran beside it): what is checked is that the oldest
    // gives way, not how fast a starved scheduler gets to it.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let health = client.get(server.url("/healthz")).send().await;
    assert_eq!(health.expect("answered").status(), 200);
    // The oldest gave way, closed at once.
    let until = Instant::now() + Duration::from_secs(10);
    assert!(closed_by(&mut waiting[0], until, None).await.is_some());
    // Gone, so that the shutdown does not wait out their bodies.
    drop(waiting);
    server.stop().await;
}

/// Issue 45 item 6 B2: a body that never completed was never timed out.
/// Now it is due within the body timeout (shortened here) at a minimum
/// rate: a trickle is answered `408` and its connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_is_cut_at_its_deadline() {
    let server = TestServer::start_with(Config {
        body_timeout: Some(Duration::from_millis(300)),
        ..Config::default()
    })
    .await;
    let addr = addr(&server);
    let started = Instant::now();
    let mut trickles = Vec::new();
    for _ in 0..5 {
        let (tcp, asked) = half_sent(&addr, LOGIN, 100, b"{", Duration::from_secs(5)).await;
        assert!(asked, "the login reads its body");
        trickles.push(tcp);
    }
    let until = started + Duration::from_secs(3);
    for tcp in &mut trickles {
        let said = closed_by(tcp, until, Some(b" ")).await;
        let said = said.expect("closed within the body timeout and a margin");
        assert!(said.starts_with("HTTP/1.1 408"), "{said}");
        assert!(said.contains("did not arrive in time"), "{said}");
    }
    server.stop().await;
}

/// Issue 45 item 6 B2: `/api/v1/integrations/*` read the whole body before
/// any check, Slack or Telegram configured or not. Now an unconfigured
/// one is `404` without waiting for a byte of it, and a configured one
/// reads at most a bounded body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_callbacks_read_no_body_unless_configured_and_a_bounded_one_then() {
    let server = TestServer::start_with(Config {
        telegram_bot_token: Some(clarify_server::ids::Secret("bot".to_owned())),
        telegram_chat_id: Some("42".to_owned()),
        telegram_webhook_secret: Some(clarify_server::ids::Secret("s3cret".to_owned())),
        telegram_api_url: Some("http://127.0.0.1:9".to_owned()),
        ..Config::default()
    })
    .await;
    let addr = addr(&server);
    let slack = "POST /api/v1/integrations/slack/interactions HTTP/1.1\r\n";
    let said = unread(&addr, slack).await;
    assert!(said.starts_with("HTTP/1.1 404"), "{said}");
    // Telegram is configured: a wrong secret is refused unread, a body
    // beyond the bound refused too.
    let telegram = "POST /api/v1/integrations/telegram/webhook HTTP/1.1\r\n\
                    X-Telegram-Bot-Api-Secret-Token: no\r\n";
    let said = unread(&addr, telegram).await;
    assert!(said.starts_with("HTTP/1.1 401"), "{said}");
    let url = server.url("/api/v1/integrations/telegram/webhook");
    let refused = server
        .client()
        .post(url)
        .header("x-telegram-bot-api-secret-token", "s3cret")
        .body(vec![b' '; 300 << 10])
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 413);
    server.stop().await;
}

/// Issue 45 item 8a: under a file limit of 1,024, 1,800 idle and 200
/// slow-drip connections left 480–750 idle ones open 16 s later, past the
/// 10 s header timeout. A burst overflowed the listening queue, and the
/// connections whose handshake the kernel then dropped were open for their
/// clients and unknown to the server, for good. Now every one is closed
/// within the header timeout (shortened here) and a margin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_idle_connections_is_closed_whole() {
    let _ = clarify_server::serve::raise_file_limit();
    let server = TestServer::start_with(Config {
        max_connections: Some(40),
        header_timeout: Some(Duration::from_millis(500)),
        ..Config::default()
    })
    .await;
    let addr = addr(&server);
    let burst = (0..1000).map(|_| {
        let addr = addr.clone();
        tokio::spawn(async move { TcpStream::connect(addr).await.expect("connect") })
    });
    let mut idle = Vec::new();
    for opened in futures_util::future::join_all(burst).await {
        idle.push(opened.unwrap());
    }
    let until = Instant::now() + Duration::from_secs(4);
    let closed = futures_util::future::join_all(
        idle.iter_mut()
            .map(|tcp| async move { closed_by(tcp, until, None).await.is_some() }),
    )
    .await;
    let open = closed.iter().filter(|closed| !**closed).count();
    assert_eq!(open, 0, "of {}, still open", closed.len());
    let health = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    server.stop().await;
}

/// Issue 45 item 6 B1: with `Content-Type: APPLICATION/JSON` a request's
/// body was not read before it took one of `/mcp/agent`'s 64 turns, so 64
/// trickling requests from one agent held them all and every other
/// agent's handshake and calls hung. Now the media type is told in any
/// case, the body read before a turn is taken, another type refused `415`
/// unread: the other agent is served at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickling_requests_cannot_take_every_turn_on_the_agent_surface() {
    let server = TestServer::start().await;
    let (_, _, trickler) = server.session(None).await;
    let addr = addr(&server);
    let head = format!(
        "POST /mcp/agent HTTP/1.1\r\nAuthorization: Bearer {trickler}\r\n\
         Content-Type: APPLICATION/JSON\r\nAccept: application/json, text/event-stream"
    );
    let trickling = (0..70).map(|_| {
        let (addr, head) = (addr.clone(), head.clone());
        tokio::spawn(async move {
            let patience = Duration::from_secs(2);
            half_sent(&addr, &head, 200, b"{\"jsonrpc\"", patience).await
        })
    });
    let trickling = futures_util::future::join_all(trickling).await;
    let (_, _, other) = server.session(None).await;
    let served = tokio::time::timeout(Duration::from_secs(5), async {
        let agent = connect(&server, "/mcp/agent", Some(&other)).await;
        agent.list_tools(None).await.expect("tools/list")
    })
    .await
    .expect("another agent is served while one trickles");
    assert_eq!(served.tools.len(), 1, "{served:?}");
    drop(trickling);
    // Told in any case, and read: a malformed body is ours to refuse.
    let url = server.url("/mcp/agent");
    let post = |kind: &'static str, body: &'static str| {
        server
            .client()
            .post(&url)
            .bearer_auth(&trickler)
            .header("content-type", kind)
            .header("accept", "application/json, text/event-stream")
            .body(body)
            .send()
    };
    let malformed = post("APPLICATION/JSON; charset=UTF-8", "{").await.unwrap();
    assert_eq!(malformed.status(), 400);
    let said: serde_json::Value = malformed.json().await.unwrap();
    assert_eq!(said["error"]["code"], -32700, "{said}");
    let plain = post("text/plain", "{}").await.unwrap();
    assert_eq!(plain.status(), 415);
    let said: serde_json::Value = plain.json().await.unwrap();
    assert_eq!(said["error"]["code"], -32600, "{said}");
    server.stop().await;
}
