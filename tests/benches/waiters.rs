//! What a blocked agent costs the server in memory (issue 13): the `clarify`
//! binary runs in a process of its own on a SQLite file; this process
//! blocks `WAITERS` agents on it (half on REST `/wait`, half in
//! `ask_user_question_kandev` over MCP) and reads the server's resident set
//! size before and after. Prints the growth per waiting agent, for each kind
//! and overall; the goal is at most 20 KiB at 10,000 (issue 31). Then as
//! many agents again ask as MCP tasks (issue 30 item 3: the client declares
//! the tasks extension, gets a task and goes away to poll later), whose
//! wait holds nothing but the rows.
//!
//! `WAITERS=2000 cargo bench -p clarify-tests --bench waiters` for a quick run;
//! `BENCH_BIN=path` measures another build of the server (a baseline);
//! `WAITERS_ONLY=rest` (or `mcp`) blocks that kind only, `tasks` runs only
//! the tasks.

use std::time::Instant;

use clarify_tests::mcp;
use clarify_tests::process::{ServerProcess, agent_session, post_json as post};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Value, json};

/// The server's tasks alive now (`clarify_tasks_alive`): what each waiter
/// keeps running, beside what it keeps in memory.
async fn tasks_alive(client: &reqwest::Client, url: &str) -> f64 {
    let text = client.get(format!("{url}/metrics")).send().await.unwrap();
    let text = text.text().await.unwrap();
    clarify_tests::metrics::sample(&text, "clarify_tasks_alive").unwrap_or(f64::NAN)
}

/// A new session and its agent's question; returns (pending id, token).
async fn asked(client: &reqwest::Client, url: &str, n: usize) -> (String, String) {
    let token = agent_session(client, url, &format!("agent {n}")).await;
    let body = json!({"questions": question(n)});
    let created = post(client, url, "/clarification/request", Some(&token), &body).await;
    (created["pending_id"].as_str().unwrap().to_owned(), token)
}

fn question(n: usize) -> Value {
    json!([{"prompt": format!("Question {n}?"), "options": [{"label": "a"}, {"label": "b"}]}])
}

#[tokio::main]
async fn main() {
    let waiters: usize = std::env::var("WAITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    // `WAITERS_WRAP="valgrind --tool=massif"` runs the server under a
    // heap profiler, to see where the memory goes.
    let wrap = std::env::var("WAITERS_WRAP").unwrap_or_default();
    // Every waiter is an agent of its own session, all the one user's
    // (auth is off): more than the default share of open sessions.
    // The tasks' agents are as many again.
    let open = (2 * waiters + 1).to_string();
    let binary = clarify_tests::bench::server_binary(env!("CARGO_BIN_EXE_clarify-under-test"));
    let server = ServerProcess::start_with(
        &binary,
        &wrap,
        clarify_tests::process::fresh_dir(),
        &["--max-open-sessions", &open, "--metrics"],
    );
    let (pid, url) = (server.pid(), server.url.clone());
    let setup = reqwest::Client::new();
    let only = std::env::var("WAITERS_ONLY").unwrap_or_default();
    if only == "tasks" {
        tasks(&setup, &url, pid, waiters).await;
        server.stop();
        return;
    }
    let half = match only.as_str() {
        "rest" => waiters,
        "mcp" => 0,
        _ => waiters / 2,
    };

    println!("waiters: {waiters} blocked agents on one server (SQLite), half REST /wait, half MCP");
    let started = Instant::now();
    let mut rest = Vec::with_capacity(half);
    let mut agents = Vec::with_capacity(half);
    for n in 0..waiters {
        let (pending, token) = asked(&setup, &url, n).await;
        if n < half {
            rest.push((pending, token));
        } else {
            agents.push(token);
        }
    }
    println!("  set up {waiters} questions in {:.1?}", started.elapsed());
    let baseline = clarify_tests::process::settled_rss(pid).await;
    let tasks_before = tasks_alive(&setup, &url).await;
    println!("  server RSS before: {baseline} KiB, {tasks_before} tasks alive");

    // REST: each waiter its own connection, blocked in a long poll.
    let mut held = Vec::with_capacity(waiters);
    for (pending, token) in rest {
        let client = reqwest::Client::new();
        let url = format!("{url}/api/v1/clarification/{pending}/wait?timeout=120");
        held.push(tokio::spawn(async move {
            let _ = client.get(url).bearer_auth(token).send().await;
        }));
    }
    let after_rest = clarify_tests::process::settled_rss(pid).await;
    let rest_each = (after_rest.saturating_sub(baseline)) as f64 / half.max(1) as f64;
    let tasks_rest = tasks_alive(&setup, &url).await;
    println!(
        "  with {half} REST waiters: {after_rest} KiB ({rest_each:.1} KiB each), {:.2} tasks each",
        (tasks_rest - tasks_before) / half.max(1) as f64
    );

    // MCP: each agent a client of its own, blocked in the tool call.
    for (n, token) in agents.into_iter().enumerate() {
        let url = format!("{url}/mcp/agent");
        held.push(tokio::spawn(async move {
            let client = mcp::connect_url(&url, Some(&token)).await;
            let args = json!({"questions": question(half + n)});
            let _ = mcp::call(&client, "ask_user_question_kandev", &args).await;
        }));
    }
    let after_all = clarify_tests::process::settled_rss(pid).await;
    let mcp_each = (after_all.saturating_sub(after_rest)) as f64 / (waiters - half).max(1) as f64;
    let each = (after_all.saturating_sub(baseline)) as f64 / waiters as f64;
    let tasks_all = tasks_alive(&setup, &url).await;
    if waiters > half {
        println!(
            "  with {} MCP waiters too: {after_all} KiB ({mcp_each:.1} KiB each), {:.2} tasks each",
            waiters - half,
            (tasks_all - tasks_rest) / (waiters - half) as f64
        );
    }
    println!("  per waiting agent: {each:.1} KiB (goal: at most 20)");

    for task in held {
        task.abort();
    }
    if only.is_empty() {
        tasks(&setup, &url, pid, waiters).await;
    }
    server.stop();
}

/// `count` agents ask as MCP tasks and go away; prints what each waiting
/// task costs the server's memory.
async fn tasks(setup: &reqwest::Client, url: &str, pid: u32, count: usize) {
    let mut tokens = Vec::with_capacity(count);
    for n in 0..count {
        tokens.push(agent_session(setup, url, &format!("task agent {n}")).await);
    }
    let before = clarify_tests::process::settled_rss(pid).await;
    let endpoint = format!("{url}/mcp/agent");
    for (n, token) in tokens.iter().enumerate() {
        let client = mcp::connect_modern(&endpoint, token, true).await;
        let args = json!({"questions": question(1_000_000 + n)});
        let call = CallToolRequestParams::new("ask_user_question_kandev")
            .with_arguments(args.as_object().expect("an object").clone());
        let asked = client.call_tool_once(call).await.expect("tools/call");
        assert!(
            matches!(asked, CallToolResponse::Task(_)),
            "a task: {asked:?}"
        );
        let _ = client.cancel().await;
    }
    let after = clarify_tests::process::settled_rss(pid).await;
    let each = (after.saturating_sub(before)) as f64 / count.max(1) as f64;
    println!(
        "  {count} agents waiting as MCP tasks (nothing held between polls): {after} KiB ({each:.1} KiB each, from {before} KiB)"
    );
}
