//! Issue 17 at scale, against the `clarify` binary (release, as benches
//! build) in a process of its own on a SQLite file, read over real sockets:
//!
//! 1. **The lists.** The file is seeded first, through the repository layer
//!    in big transactions: `SCALE_HISTORY` answered messages (1,000,000)
//!    and `SCALE_PENDING` waiting bundles (10,000), ten sessions a task.
//!    Then, on one keep-alive connection each: `list_pending_questions_kandev`
//!    through the official Rust MCP SDK (the first page of 50, and a page
//!    deep in the cursor chain), and the first page of `GET /api/v1/tasks`;
//!    p50 / p99. Baseline: `GET /healthz` on the same kind of connection,
//!    the transport's own cost.
//! 2. **The wake.** `WAKE` agents blocked at once (10,000; half on REST
//!    `/wait`, half in `ask_user_question_kandev`), answered at `WAKE_RATE`
//!    answers a second (500): answer sent → agent's call returns, p50 /
//!    p99. Baseline: the same with one agent blocked at a time. Meanwhile
//!    `GET /healthz` every 10 ms (p50 / p99), and the server's resident
//!    set per blocked agent. Issue 50 runs it at 100,000 (`WAKE=100000`):
//!    the bench raises the open-file limit as an operator would (as root,
//!    its hard limit too) and spreads its connections over loopback
//!    source addresses (127.0.0.1, .2, …: 20,000 each), since one address
//!    has some 28,000 ephemeral ports.
//!
//! `SCALE_HISTORY=5000 SCALE_PENDING=200 WAKE=200 cargo bench -p clarify-tests --bench scale`
//! for a quick run (`SCALE_CALLS`: list calls, 300; `WAKE_ALONE`: baseline
//! wakes, 50; `WAITERS_DECAY`: seconds the allocator is given to hand back
//! what arrivals freed before memory is read, 12; `BENCH_BIN`: another
//! build, a baseline); `SCALE_ONLY=lists` (or `wake`) for one part.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clarify_server::db::{messages, tasks};
use clarify_server::{AppState, Config};
use clarify_tests::bench::{percentiles, server_binary, setting};
use clarify_tests::mcp;
use clarify_tests::process::{
    ServerProcess, agent_session, database_url, fresh_dir, post_json as post,
};
use serde_json::{Value, json};

const BUILT: &str = env!("CARGO_BIN_EXE_clarify-under-test");
const SESSIONS_PER_TASK: usize = 10;

fn question(n: usize) -> Value {
    json!([{"prompt": format!("Question {n}?"), "options": [{"label": "a"}, {"label": "b"}]}])
}

/// Seeds `dir`'s database: `pending` waiting bundles, one per session, ten
/// sessions a task, and `history` answered messages spread over the
/// sessions.
async fn seed(dir: &std::path::Path, history: usize, pending: usize) {
    let db = clarify_server::db::Db::connect(&database_url(dir))
        .await
        .unwrap();
    let state = AppState::new(db, Config::default()).await.unwrap();
    let now = clarify_server::clock::now_micros();
    let bundle: clarify_core::NewBundle =
        serde_json::from_value(json!({"questions": question(0)})).unwrap();
    let mut sessions = Vec::with_capacity(pending);
    for n in 0..pending {
        if n % SESSIONS_PER_TASK == 0 {
            let task = tasks::Task {
                id: format!("task-{n:06}"),
                workspace_id: String::new(),
                title: format!("task {n}"),
                description: String::new(),
                created_at: now,
                updated_at: now,
            };
            state
                .db()
                .write(async |c| tasks::insert(c, &task).await)
                .await
                .unwrap();
        }
        let task = format!("task-{:06}", n / SESSIONS_PER_TASK * SESSIONS_PER_TASK);
        let session = clarify_tests::insert_session(state.db(), &task, "").await;
        state
            .lifecycle
            .asking
            .create_bundle(&session.as_str().into(), &bundle, false, None)
            .await
            .unwrap();
        sessions.push((session, task));
    }
    let per_tx = 50_000;
    let mut written = 0;
    while written < history {
        let mut tx = state.db().begin_write().await.unwrap();
        for i in written..history.min(written + per_tx) {
            let (session, task) = &sessions[i % sessions.len()];
            let metadata = json!({
                "pending_id": format!("old-{i}"), "question_id": "q1", "question_index": 0,
                "question": {"question_id": "q1", "title": "", "prompt": "old", "options": []},
                "status": "answered",
                "response": {"question_id": "q1", "selected_options": [], "custom_text": "done"}
            });
            let at = i64::try_from(i).unwrap();
            let message = messages::Message {
                id: format!("history-{i}"),
                task_session_id: session.clone(),
                task_id: task.clone(),
                turn_id: "old-turn".into(),
                kind: messages::CLARIFICATION_REQUEST.into(),
                content: "old".into(),
                metadata: metadata.to_string(),
                created_at: at,
                updated_at: at,
                reject_reason: String::new(),
            };
            messages::insert(&mut tx, &message).await.unwrap();
        }
        tx.commit().await.unwrap();
        written = history.min(written + per_tx);
    }
    state.shutdown.cancel();
}

async fn lists(history: usize, pending: usize) {
    let dir = fresh_dir();
    let started = Instant::now();
    seed(&dir, history, pending).await;
    println!(
        "lists: {history} answered messages, {pending} waiting bundles (seeded in {:.1?})",
        started.elapsed()
    );
    let calls = setting("SCALE_CALLS", 300);
    let server = ServerProcess::start_in(&server_binary(BUILT), "", dir);
    let url = server.url.clone();
    let http = reqwest::Client::new();

    let mut floor = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        http.get(format!("{url}/healthz")).send().await.unwrap();
        floor.push(started.elapsed());
    }
    let client = mcp::connect_url(&format!("{url}/mcp"), None).await;
    let list = |args: Value| {
        let client = &client;
        async move { mcp::ok(&mcp::call(client, "list_pending_questions_kandev", &args).await) }
    };
    // A cursor some way down the chain (or the last page's, when short).
    let mut deep_args = json!({});
    for _ in 0..(pending / 50 / 2).min(100) {
        let page = list(deep_args.clone()).await;
        match page["next_cursor"].as_str() {
            Some(cursor) if !cursor.is_empty() => deep_args = json!({"cursor": cursor}),
            _ => break,
        }
    }
    let mut first = Vec::with_capacity(calls);
    let mut deep = Vec::with_capacity(calls);
    let mut task_pages = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let page = list(json!({})).await;
        first.push(started.elapsed());
        assert_eq!(mcp::pending_ids(&page).len(), 50.min(pending));
        let started = Instant::now();
        list(deep_args.clone()).await;
        deep.push(started.elapsed());
        let started = Instant::now();
        let tasks = http
            .get(format!("{url}/api/v1/tasks?limit=50"))
            .send()
            .await
            .unwrap();
        let body: Value = tasks.json().await.unwrap();
        task_pages.push(started.elapsed());
        assert!(
            body["tasks"][0]["task_pending_action"].is_string(),
            "{body}"
        );
    }
    let (floor50, floor99, _) = percentiles(floor);
    println!("  GET /healthz (baseline): p50 {floor50:.2} ms, p99 {floor99:.2} ms");
    for (what, samples) in [
        ("list_pending_questions_kandev, first page", first),
        ("list_pending_questions_kandev, deep page ", deep),
        ("GET /api/v1/tasks, first page of 50      ", task_pages),
    ] {
        let (p50, p99, _) = percentiles(samples);
        println!(
            "  {what}: p50 {p50:.2} ms, p99 {p99:.2} ms ({:.1}x the baseline's p50; goal: p99 at most 10 ms)",
            p50 / floor50.max(f64::EPSILON)
        );
    }
    server.stop();
}

type Woken = Arc<Mutex<Vec<Option<Instant>>>>;

/// Connections a loopback source address carries at most.
const PER_SOURCE: usize = 20_000;

/// The clients of agent `n`'s loopback source address: one per address,
/// since a client opens a connection per request in flight (and each
/// carries its own TLS roots: 100,000 of them would not fit).
#[derive(Clone)]
struct Source {
    rest: reqwest::Client,
    mcp: reqwest_mcp::Client,
}

fn sources(agents: usize) -> Vec<Source> {
    (0..agents.div_ceil(PER_SOURCE).max(1))
        .map(|i| {
            let last = u8::try_from(1 + i).expect("at most 254 source addresses");
            let address = std::net::IpAddr::from([127, 0, 0, last]);
            Source {
                rest: reqwest::Client::builder()
                    .local_address(address)
                    .build()
                    .unwrap(),
                mcp: reqwest_mcp::Client::builder()
                    .local_address(address)
                    .build()
                    .unwrap(),
            }
        })
        .collect()
}

/// Blocks agent `n` (REST `/wait` or MCP) and records when its call returns.
async fn block(
    (url, source): (String, Source),
    n: usize,
    rest: bool,
    woken: Woken,
    ready: Arc<tokio::sync::Semaphore>,
) {
    let http = source.rest;
    let token = agent_session(&http, &url, &format!("agent {n}")).await;
    if rest {
        let body = json!({"questions": question(n)});
        let asked = post(&http, &url, "/clarification/request", Some(&token), &body).await;
        let pending = asked["pending_id"].as_str().unwrap().to_owned();
        let wait = http
            .get(format!(
                "{url}/api/v1/clarification/{pending}/wait?timeout=600"
            ))
            .bearer_auth(&token)
            .send();
        ready.add_permits(1);
        let answer: Value = wait.await.unwrap().json().await.unwrap();
        assert_eq!(answer["status"], "answered", "{answer}");
    } else {
        let client =
            mcp::connect_url_with(&format!("{url}/mcp/agent"), Some(&token), source.mcp).await;
        ready.add_permits(1);
        let args = json!({"questions": question(n)});
        let answer = mcp::ok(&mcp::call(&client, "ask_user_question_kandev", &args).await);
        assert!(answer.get("answers").is_some(), "{answer}");
    }
    woken.lock().unwrap()[n] = Some(Instant::now());
}

/// Every waiting bundle's id, by the `n` in its prompt.
async fn waiting(http: &reqwest::Client, url: &str, agents: usize) -> Vec<String> {
    let mut ids = vec![String::new(); agents];
    let mut cursor = String::new();
    loop {
        let page: Value = http
            .get(format!("{url}/api/v1/pending?limit=200&cursor={cursor}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for bundle in page["bundles"].as_array().unwrap() {
            let prompt = bundle["questions"][0]["prompt"].as_str().unwrap();
            let n: usize = prompt
                .trim_start_matches("Question ")
                .trim_end_matches('?')
                .parse()
                .unwrap();
            ids[n] = bundle["pending_id"].as_str().unwrap().to_owned();
        }
        match page["next_cursor"].as_str() {
            Some(next) if !next.is_empty() => cursor = next.to_owned(),
            _ => return ids,
        }
    }
}

/// What one crowd of blocked agents measured.
#[derive(Default)]
struct Crowd {
    /// Answer sent → the agent's call returned.
    wakes: Vec<Duration>,
    /// `GET /healthz` while they were blocked and being answered.
    health: Vec<Duration>,
    /// The server's resident set before and with every agent blocked (KiB).
    rss: (u64, u64),
}

/// Blocks `agents` agents on the server at `url` (process `pid`), answers
/// them at `rate` a second.
async fn wakes(url: &str, pid: u32, agents: usize, rate: usize) -> Crowd {
    let before = clarify_tests::process::rss_kib(pid);
    let woken: Woken = Arc::new(Mutex::new(vec![None; agents]));
    let ready = Arc::new(tokio::sync::Semaphore::new(0));
    let mut blocked = Vec::with_capacity(agents);
    let sources = sources(agents);
    for n in 0..agents {
        blocked.push(tokio::spawn(block(
            (url.to_owned(), sources[n / PER_SOURCE].clone()),
            n,
            n % 2 == 0,
            woken.clone(),
            ready.clone(),
        )));
        if n % 200 == 199 {
            // Set-up in waves, so that the server is not flooded with connects.
            // The permits come back when the guard drops.
            let _all = ready
                .acquire_many(u32::try_from(n + 1).unwrap())
                .await
                .unwrap();
        }
    }
    let _ = ready
        .acquire_many(u32::try_from(agents).unwrap())
        .await
        .unwrap();
    let http = reqwest::Client::new();
    // Every bundle listed means every MCP ask has been made.
    let ids = loop {
        let ids = waiting(&http, url, agents).await;
        if ids.iter().all(|id| !id.is_empty()) {
            break ids;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // Blocked means waiting server-side: read once the last long polls are
    // in and the allocator has given back what their arrival freed (not
    // for the baseline's single agents, whose memory is not reported).
    let blocked_rss = if agents > 1 {
        clarify_tests::process::settled_rss(pid).await
    } else {
        clarify_tests::process::rss_kib(pid)
    };
    // The server's health, probed every 10 ms until the last is answered.
    let probing = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let probe = {
        let (probing, url) = (probing.clone(), url.to_owned());
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut health = Vec::new();
            let mut ticks = tokio::time::interval(Duration::from_millis(10));
            while probing.load(std::sync::atomic::Ordering::Relaxed) {
                ticks.tick().await;
                let started = Instant::now();
                http.get(format!("{url}/healthz")).send().await.unwrap();
                health.push(started.elapsed());
            }
            health
        })
    };
    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    let mut sent = vec![Instant::now(); agents];
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    let mut answering = Vec::with_capacity(agents);
    for (n, id) in ids.iter().enumerate() {
        ticks.tick().await;
        sent[n] = Instant::now();
        let (http, path, answer, url) = (
            http.clone(),
            format!("/clarification/{id}/respond"),
            answer.clone(),
            url.to_owned(),
        );
        answering.push(tokio::spawn(async move {
            let body = post(&http, &url, &path, None, &answer).await;
            assert_eq!(body["claimed"], true, "{body}");
        }));
    }
    for task in answering.into_iter().chain(blocked) {
        task.await.unwrap();
    }
    probing.store(false, std::sync::atomic::Ordering::Relaxed);
    let health = probe.await.unwrap();
    let woken = woken.lock().unwrap();
    Crowd {
        wakes: (0..agents).map(|n| woken[n].unwrap() - sent[n]).collect(),
        health,
        rss: (before, blocked_rss),
    }
}

#[tokio::main]
async fn main() {
    // `SCALE_ONLY=lists` (or `wake`) runs that part only.
    let only = std::env::var("SCALE_ONLY").unwrap_or_default();
    let history = setting("SCALE_HISTORY", 1_000_000);
    let pending = setting("SCALE_PENDING", 10_000);
    if only != "wake" {
        lists(history, pending).await;
    }
    if only == "lists" {
        return;
    }

    let agents = setting("WAKE", 10_000);
    let rate = setting("WAKE_RATE", 500);
    // Each agent holds a socket here and one in the server (which raises
    // its soft limit to the hard one): room for both, as an operator gives.
    let files = u64::try_from(agents * 3 + 10_000).unwrap();
    if let Err(error) = rlimit::setrlimit(rlimit::Resource::NOFILE, files, files) {
        println!("  (could not raise the open-file limit to {files}: {error})");
    }
    // Every agent is the one user's (auth off): room for their sessions.
    let open = (agents + 100).to_string();
    let server = ServerProcess::start_with(
        &server_binary(BUILT),
        "",
        fresh_dir(),
        &["--max-open-sessions", &open],
    );
    let mut alone = Vec::new();
    let mut alone_health = Vec::new();
    for _ in 0..setting("WAKE_ALONE", 50) {
        let one = wakes(&server.url, server.pid(), 1, rate).await;
        alone.extend(one.wakes);
        alone_health.extend(one.health);
    }
    let started = Instant::now();
    let crowd = wakes(&server.url, server.pid(), agents, rate).await;
    let (alone50, alone99, _) = percentiles(alone);
    let (health50, health99, _) = percentiles(alone_health);
    let (crowd_health50, crowd_health99, _) = percentiles(crowd.health);
    let (before, blocked) = crowd.rss;
    let (p50, p99, _) = percentiles(crowd.wakes);
    println!("wake: answer sent → blocked agent's call returns (half REST /wait, half MCP)");
    println!("  one agent blocked (baseline): p50 {alone50:.2} ms, p99 {alone99:.2} ms");
    println!(
        "  {agents} agents blocked, answered at {rate}/s: p50 {p50:.2} ms, p99 {p99:.2} ms \
         ({:.1}x the baseline's p50; goal: p99 at most 50 ms; {:.1?} in all)",
        p50 / alone50.max(f64::EPSILON),
        started.elapsed()
    );
    println!(
        "  GET /healthz meanwhile: p50 {crowd_health50:.2} ms, p99 {crowd_health99:.2} ms \
         (one agent blocked: p50 {health50:.2} ms, p99 {health99:.2} ms; goal: p99 at most 10 ms)"
    );
    #[allow(clippy::cast_precision_loss)] // KiB far below 2^52
    let per = blocked.saturating_sub(before) as f64 / agents as f64;
    println!(
        "  server memory: {:.0} MiB before, {:.0} MiB with {agents} blocked: {per:.1} KiB each \
         (goal: 100,000 within 2 GiB)",
        before as f64 / 1024.0,
        blocked as f64 / 1024.0,
    );
    server.stop();
}
