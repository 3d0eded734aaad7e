//! Ask → notice delivered (issue 50): the `clarify` binary (release, as
//! benches build) in a process of its own on a SQLite file, told of every
//! waiting bundle through an operator webhook and an ntfy topic (local
//! stand-ins speaking their protocols, `NoticeSink` and `NtfyFake`).
//! `NOTICE_RATE` agents ask a second (100) for `NOTICE_SECONDS` (20); each
//! notice's latency is from just before its ask was sent to its arrival at
//! the stand-in; p50 / p99 / max per target. Baseline, in the same run:
//! the same load with those two targets only; then again with a third,
//! slow target mixed in (a webhook that takes every request and never
//! answers), which must not hold the others up. The goal: p99 ≤ 1 s.
//!
//! `NOTICE_SECONDS=3 cargo bench -p clarify-tests --bench notices` for a
//! quick run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clarify_tests::bench::{percentiles, setting};
use clarify_tests::process::{ServerProcess, agent_session, post_json as post};
use clarify_tests::{NoticeSink, NtfyFake, Receiver};
use serde_json::json;

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

/// One run: a server with the two fast targets and, if `slow`, the slow
/// one; `rate` asks a second for `seconds`. Prints each fast target's
/// latencies.
async fn run(label: &str, rate: usize, seconds: usize, slow: Option<&str>) {
    let sink = NoticeSink::start(0).await;
    let ntfy = NtfyFake::start(0).await;
    let hook = sink.url();
    let topic = ntfy.topic_url("bench");
    let mut flags = vec![
        "--notify-webhook",
        hook.as_str(),
        "--notify-ntfy",
        topic.as_str(),
    ];
    if let Some(slow) = slow {
        flags.extend(["--notify-webhook", slow]);
    }
    let asks = rate * seconds;
    let open = (asks + 10).to_string();
    flags.extend(["--max-open-sessions", open.as_str()]);
    let server = ServerProcess::start_with(BINARY, "", clarify_tests::process::fresh_dir(), &flags);
    let http = reqwest::Client::new();
    // The sessions first: the timed part is the asks alone.
    let mut tokens = Vec::with_capacity(asks);
    for n in 0..asks {
        tokens.push(agent_session(&http, &server.url, &format!("agent {n}")).await);
    }
    let asked: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut calls = Vec::with_capacity(asks);
    let started = Instant::now();
    for (n, token) in tokens.into_iter().enumerate() {
        ticks.tick().await;
        let (http, url, asked) = (http.clone(), server.url.clone(), asked.clone());
        // Each ask on its own task, so a slow one delays none after it.
        calls.push(tokio::spawn(async move {
            let body = json!({"questions": [{"prompt": format!("Notice {n}?"),
                "options": [{"label": "a"}, {"label": "b"}]}]});
            let sent = Instant::now();
            let created = post(&http, &url, "/clarification/request", Some(&token), &body).await;
            let id = created["pending_id"].as_str().expect("asked").to_owned();
            asked.lock().unwrap().insert(id, sent);
        }));
    }
    for call in calls {
        call.await.unwrap();
    }
    let offered = started.elapsed();
    let asked = asked.lock().unwrap().clone();
    // Every notice in, or a minute's grace.
    let deadline = Instant::now() + Duration::from_secs(60);
    let waiting = |key: &str| key.strip_suffix(":waiting").map(str::to_owned);
    loop {
        let hooks = sink
            .deliveries()
            .iter()
            .filter(|d| d.key.ends_with(":waiting"))
            .count();
        let pushes = ntfy
            .on("bench")
            .iter()
            .filter(|p| p.key.ends_with(":waiting"))
            .count();
        if (hooks >= asks && pushes >= asks) || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let latency = |arrivals: Vec<(String, Instant)>| -> Vec<Duration> {
        arrivals
            .into_iter()
            .filter_map(|(key, at)| Some(at - *asked.get(&waiting(&key)?)?))
            .collect()
    };
    let hooks = latency(
        sink.deliveries()
            .into_iter()
            .map(|d| (d.key, d.at))
            .collect(),
    );
    let pushes = latency(
        ntfy.on("bench")
            .into_iter()
            .map(|p| (p.key, p.at))
            .collect(),
    );
    println!(
        "{label}: {asks} asks offered at {rate}/s in {:.1} s",
        offered.as_secs_f64()
    );
    for (target, samples) in [("webhook", hooks), ("ntfy", pushes)] {
        let got = samples.len();
        let (p50, p99, max) = percentiles(samples);
        println!(
            "  {target:<8} {got}/{asks} notices: p50 {p50:.1} ms, p99 {p99:.1} ms, max {max:.1} ms"
        );
    }
    server.stop();
}

#[tokio::main]
async fn main() {
    let rate = setting("NOTICE_RATE", 100);
    let seconds = setting("NOTICE_SECONDS", 20);
    run("baseline (two fast targets)", rate, seconds, None).await;
    let slow = Receiver::start().await;
    let hanging = slow.hanging_url();
    run("with a slow target mixed in", rate, seconds, Some(&hanging)).await;
    println!(
        "  the slow target was sent {} notices (each held until the send's timeout)",
        slow.hanging_count()
    );
}
