//! What a keep-alive MCP client waits per call (issue 17): the release
//! binary in a process of its own, one page of 50 pending bundles, and
//! `list_pending_questions_kandev` called over one keep-alive connection,
//! each request sent in one write with `TCP_NODELAY`, as SDKs and browsers
//! do. The baseline, in the same run, is the same call on a fresh
//! connection each time (what curl sees). Without `TCP_NODELAY` on the
//! server's sockets the keep-alive median was ~45 ms (Nagle's algorithm
//! holding the response's later writes until the client's delayed ACK);
//! the goal is under 10 ms.
//!
//! `CALLS=50 cargo bench -p clarify-tests --bench keepalive` for a quick run.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use clarify_tests::process::ServerProcess;
use serde_json::{Value, json};

/// One HTTP/1.1 POST of `body` to `path` on `stream`, in one write; returns
/// the response head and body (chunked: up to its last chunk).
fn exchange(stream: &mut TcpStream, host: &str, path: &str, headers: &str, body: &str) -> String {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the server closed the connection");
        response.extend_from_slice(&buffer[..n]);
        if complete(&response) {
            return String::from_utf8_lossy(&response).into_owned();
        }
    }
}

/// Whether `response` holds a whole HTTP/1.1 response.
fn complete(response: &[u8]) -> bool {
    let text = String::from_utf8_lossy(response);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let head = head.to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        return body.ends_with("0\r\n\r\n");
    }
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    body.len() >= length
}

fn connect(host: &str) -> TcpStream {
    let stream = TcpStream::connect(host).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

/// Opens an MCP session on `/mcp`; returns the headers every later request
/// carries.
fn open_session(host: &str) -> String {
    let mut stream = connect(host);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "keepalive-bench", "version": "1"}}});
    let response = exchange(&mut stream, host, "/mcp", "", &init.to_string());
    let session = response
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l["mcp-session-id:".len()..].trim().to_owned())
        })
        .expect("an MCP session id");
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    exchange(
        &mut stream,
        host,
        "/mcp",
        &headers,
        &initialized.to_string(),
    );
    headers
}

fn list_call(id: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "list_pending_questions_kandev", "arguments": {}}})
    .to_string()
}

fn median_and_p99(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    (ms(samples[samples.len() / 2]), ms(p99))
}

/// Fifty pending bundles, so that the page listed is a full one.
fn seed(host: &str) {
    let mut stream = connect(host);
    let mut post = |path: &str, token: Option<&str>, body: &Value| -> Value {
        let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n"));
        let response = exchange(
            &mut stream,
            host,
            &format!("/api/v1{path}"),
            auth.as_deref().unwrap_or_default(),
            &body.to_string(),
        );
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap()
    };
    for n in 0..50 {
        let task = post("/tasks", None, &json!({"title": format!("task {n}")}));
        let path = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
        let session = post(&path, None, &json!({}));
        let question = json!({"questions": [{"prompt": format!("Question {n}?"),
            "options": [{"label": "a"}, {"label": "b"}]}]});
        post(
            "/clarification/request",
            session["agent_token"].as_str(),
            &question,
        );
    }
}

fn main() {
    let calls: usize = std::env::var("CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let server = ServerProcess::start(env!("CARGO_BIN_EXE_clarify-under-test"), "");
    let host = server.url.trim_start_matches("http://").to_owned();
    seed(&host);
    let headers = open_session(&host);

    let mut kept = connect(&host);
    let mut keep_alive = Vec::with_capacity(calls);
    for n in 0..calls {
        let started = Instant::now();
        let response = exchange(&mut kept, &host, "/mcp", &headers, &list_call(n + 2));
        keep_alive.push(started.elapsed());
        assert!(response.contains("pending_id"), "{response}");
    }
    let mut fresh = Vec::with_capacity(calls);
    for n in 0..calls {
        let started = Instant::now();
        let mut stream = connect(&host);
        exchange(&mut stream, &host, "/mcp", &headers, &list_call(n + 2));
        fresh.push(started.elapsed());
    }
    let (kept_median, kept_p99) = median_and_p99(keep_alive);
    let (fresh_median, fresh_p99) = median_and_p99(fresh);
    println!("keepalive: list_pending_questions_kandev (50 bundles), {calls} calls each");
    println!(
        "  keep-alive connection: median {kept_median:.2} ms, p99 {kept_p99:.2} ms (goal: median under 10 ms)"
    );
    println!(
        "  fresh connection each (baseline): median {fresh_median:.2} ms, p99 {fresh_p99:.2} ms"
    );
    println!(
        "  keep-alive / fresh: {:.2}x",
        kept_median / fresh_median.max(f64::EPSILON)
    );
    server.stop();
}
