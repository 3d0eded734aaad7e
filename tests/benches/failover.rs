//! One replica's crash with agents blocked on it (issue 50): two `clarify`
//! processes (release, as benches build) on one PostgreSQL database;
//! `FAILOVER_AGENTS` agents (10,000) each ask through the first and block
//! on its `GET /wait`; the first is killed with SIGKILL; every agent finds
//! its wait cut and waits again on the second, as an agent behind a load
//! balancer does; then each is answered through the second at
//! `FAILOVER_RATE` answers a second (500). Every agent must get its
//! answer, and none twice. Prints how long the agents took to be waiting
//! again after the kill, and answer → the agent's call returns (p50 /
//! p99); baseline, in the same run: the same answers with no crash, on a
//! crowd blocked on the second replica from the start.
//!
//! Needs `CLARIFY_TEST_POSTGRES_URL` (the test command's cluster).
//! `FAILOVER_AGENTS=200 cargo bench -p clarify-tests --bench failover` for a
//! quick run.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clarify_tests::TestDatabase;
use clarify_tests::bench::{percentiles, setting};
use clarify_tests::process::{ServerProcess, agent_session, post_json as post};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

/// What each agent saw.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// Answers its waits returned (must end at exactly one).
    answers: usize,
    /// When its answer came.
    woken: Option<Instant>,
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// Agent `n`: waits for `pending` on `first`; when that wait is cut (its
/// replica died), waits again on `second`, until an answer.
async fn agent(
    (first, second): (String, String),
    n: usize,
    (pending, token): (String, String),
    log: Log,
    ready: Arc<tokio::sync::Semaphore>,
) {
    let http = reqwest::Client::new();
    let wait = |url: &str| {
        http.get(format!(
            "{url}/api/v1/clarification/{pending}/wait?timeout=600"
        ))
        .bearer_auth(&token)
        .send()
    };
    let mut on = first.clone();
    let mut signalled = false;
    loop {
        let call = wait(&on);
        if !signalled {
            ready.add_permits(1);
            signalled = true;
        }
        match call.await {
            Ok(response) if response.status() == 200 => {
                let body: Value = response.json().await.unwrap_or_default();
                if body["status"] == "answered" {
                    let mut log = log.lock().unwrap();
                    log[n].answers += 1;
                    log[n].woken = Some(Instant::now());
                    return;
                }
                // Still waiting (a timed-out poll): again, where it was.
            }
            _ if on == first => {
                // The replica is gone: to the other, as a balancer would.
                on = second.clone();
            }
            other => panic!("agent {n}: the second replica failed too: {other:?}"),
        }
    }
}

/// Returns once the replica at `url` counts `count` agents blocked on it
/// (its `clarify_agents_waiting`: the server's word, not the clients').
async fn until_waiting(url: &str, count: usize) {
    let http = reqwest::Client::new();
    loop {
        let response = http.get(format!("{url}/metrics")).send().await.unwrap();
        let text = response.text().await.unwrap();
        let waiting = clarify_tests::metrics::sample(&text, "clarify_agents_waiting");
        #[allow(clippy::cast_precision_loss)] // agents far below 2^52
        if waiting.is_some_and(|w| w >= count as f64) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asks `agents` questions through `url`: (pending id, agent token) each.
async fn ask_all(url: &str, agents: usize) -> Vec<(String, String)> {
    let http = reqwest::Client::new();
    let mut asked = Vec::with_capacity(agents);
    for n in 0..agents {
        let token = agent_session(&http, url, &format!("agent {n}")).await;
        let body = json!({"questions": [{"prompt": format!("Failover {n}?"),
            "options": [{"label": "a"}, {"label": "b"}]}]});
        let created = post(&http, url, "/clarification/request", Some(&token), &body).await;
        asked.push((created["pending_id"].as_str().unwrap().to_owned(), token));
    }
    asked
}

/// Answers every bundle of `asked` through `url` at `rate` a second; when
/// each answer was sent.
async fn answer_all(url: &str, asked: &[(String, String)], rate: usize) -> Vec<Instant> {
    let http = reqwest::Client::new();
    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    let mut sent = Vec::with_capacity(asked.len());
    let mut calls = Vec::with_capacity(asked.len());
    for (pending, _) in asked {
        ticks.tick().await;
        sent.push(Instant::now());
        let (http, url, path, answer) = (
            http.clone(),
            url.to_owned(),
            format!("/clarification/{pending}/respond"),
            answer.clone(),
        );
        calls.push(tokio::spawn(async move {
            let body = post(&http, &url, &path, None, &answer).await;
            assert_eq!(body["claimed"], true, "{body}");
        }));
    }
    for call in calls {
        call.await.unwrap();
    }
    sent
}

/// Blocks every agent of `asked` on `first` (falling over to `second`).
async fn block_all(
    urls: (&str, &str),
    asked: &[(String, String)],
    log: &Log,
) -> Vec<tokio::task::JoinHandle<()>> {
    let ready = Arc::new(tokio::sync::Semaphore::new(0));
    let mut agents = Vec::with_capacity(asked.len());
    for (n, bundle) in asked.iter().enumerate() {
        agents.push(tokio::spawn(agent(
            (urls.0.to_owned(), urls.1.to_owned()),
            n,
            bundle.clone(),
            log.clone(),
            ready.clone(),
        )));
    }
    let _all = ready
        .acquire_many(u32::try_from(asked.len()).unwrap())
        .await
        .unwrap();
    until_waiting(urls.0, asked.len()).await;
    agents
}

/// Every agent answered exactly once; the answer → wake latencies.
async fn settle(
    agents: Vec<tokio::task::JoinHandle<()>>,
    log: &Log,
    sent: &[Instant],
) -> Vec<Duration> {
    for agent in agents {
        agent.await.unwrap();
    }
    let log = log.lock().unwrap();
    let twice = log.iter().filter(|s| s.answers > 1).count();
    let never = log.iter().filter(|s| s.answers == 0).count();
    assert_eq!((twice, never), (0, 0), "agents answered twice, never");
    log.iter()
        .zip(sent)
        .map(|(seen, sent)| seen.woken.unwrap().saturating_duration_since(*sent))
        .collect()
}

#[tokio::main]
async fn main() {
    assert!(
        clarify_tests::testing_postgres(),
        "set CLARIFY_TEST_POSTGRES_URL: replicas share PostgreSQL"
    );
    let agents = setting("FAILOVER_AGENTS", 10_000);
    let rate = setting("FAILOVER_RATE", 500);
    let database = TestDatabase::create().await;
    let open = (2 * agents + 100).to_string();
    // `--metrics`: each says how many agents it holds blocked.
    let flags = ["--max-open-sessions", open.as_str(), "--metrics"];
    let first = ServerProcess::start_on(BINARY, database.url(), &flags);
    let second = ServerProcess::start_on(BINARY, database.url(), &flags);
    let (one, two) = (first.url.clone(), second.url.clone());

    // Baseline: a crowd blocked on the second from the start, answered.
    let asked = ask_all(&two, agents).await;
    let log: Log = Arc::new(Mutex::new(vec![Seen::default(); agents]));
    let blocked = block_all((&two, &two), &asked, &log).await;
    let sent = answer_all(&two, &asked, rate).await;
    let (base50, base99, _) = percentiles(settle(blocked, &log, &sent).await);

    // The crash: a crowd blocked on the first, which is killed.
    let asked = ask_all(&one, agents).await;
    let log: Log = Arc::new(Mutex::new(vec![Seen::default(); agents]));
    let blocked = block_all((&one, &two), &asked, &log).await;
    let killed = Instant::now();
    first.kill();
    until_waiting(&two, agents).await;
    let again = killed.elapsed();
    let sent = answer_all(&two, &asked, rate).await;
    let (p50, p99, _) = percentiles(settle(blocked, &log, &sent).await);
    println!("failover: {agents} agents blocked on a replica killed with SIGKILL (PostgreSQL)");
    println!(
        "  every agent blocked on the other replica (by its count) {:.0} ms after the kill",
        again.as_secs_f64() * 1000.0
    );
    println!(
        "  answered there at {rate}/s, every agent once, none twice: answer → call returns \
         p50 {p50:.2} ms, p99 {p99:.2} ms (no crash, the baseline: p50 {base50:.2} ms, \
         p99 {base99:.2} ms)"
    );
    second.stop();
}
