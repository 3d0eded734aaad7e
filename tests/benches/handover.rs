//! How long an answer takes to reach the agent blocked on it: from the
//! answer's submission to the agent's wait returning, with the agent on the
//! same replica as the answerer (the baseline) and on another replica of the
//! same PostgreSQL database (the `LISTEN/NOTIFY` relay); then a crowd of
//! agents blocked at once, answered 16 at a time, and what renewing their
//! attachment leases costs a replica. Needs `CLARIFY_TEST_POSTGRES_URL`;
//! without it, measures SQLite's one replica.

use std::time::{Duration, Instant};

use clarify_core::Channel;
use clarify_server::auth::Caller;
use clarify_server::lifecycle::Via;
use clarify_server::{AppState, Config};
use clarify_tests::TestDatabase;
use serde_json::json;

const RUNS: usize = 200;
const CROWD: usize = 1000;

async fn replica(database: &TestDatabase) -> AppState {
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    AppState::new(db, Config::default()).await.unwrap()
}

async fn task(state: &AppState) -> String {
    let id = clarify_server::ids::new_id();
    clarify_tests::insert_task(state.db(), &id).await;
    id
}

/// An agent blocked on a new question of its own session on `agent`;
/// resolves to the instant its wait returned.
async fn blocked_agent(
    agent: &AppState,
    task_id: &str,
) -> (String, tokio::task::JoinHandle<Instant>) {
    let session = clarify_tests::insert_session(agent.db(), task_id, "").await;
    let bundle: clarify_core::NewBundle = serde_json::from_value(json!({"questions": [
        {"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]}))
    .unwrap();
    let (created, mut waiting) = agent
        .lifecycle
        .asking
        .create_attached(&session.as_str().into(), &bundle, None)
        .await
        .unwrap();
    let lifecycle = agent.lifecycle.clone();
    let pending_id = created.pending_id.clone();
    let blocked = tokio::spawn(async move {
        lifecycle
            .reading
            .await_outcome(&pending_id, &mut waiting, Duration::from_secs(120))
            .await
            .expect("the agent got the answer");
        Instant::now()
    });
    (created.pending_id.into_string(), blocked)
}

async fn answer(answerer: &AppState, pending_id: &str) {
    let submission: clarify_core::Submission = serde_json::from_value(
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
    )
    .unwrap();
    let body = answerer
        .lifecycle
        .resolving
        .resolve(
            &Caller::Unscoped,
            &Via::channel(Channel::Rest),
            &pending_id.into(),
            &submission,
        )
        .await
        .unwrap();
    assert!(body.claimed);
}

/// The median hand-over time with the agent on `agent` and the answer given
/// through `answerer`.
async fn median_handover(agent: &AppState, answerer: &AppState) -> Duration {
    let task_id = task(agent).await;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let (pending_id, blocked) = blocked_agent(agent, &task_id).await;
        let started = Instant::now();
        answer(answerer, &pending_id).await;
        let reached = blocked.await.unwrap();
        times.push(reached.saturating_duration_since(started));
    }
    times.sort();
    times[RUNS / 2]
}

/// [`CROWD`] agents blocked on `agent` at once, answered 16 at a time
/// through `answerer`: the time until the last of them has its answer.
async fn crowd(agent: &AppState, answerer: &AppState) -> Duration {
    use futures_util::StreamExt as _;
    let task_id = task(agent).await;
    let mut pending = Vec::with_capacity(CROWD);
    let mut blocked = Vec::with_capacity(CROWD);
    for _ in 0..CROWD {
        let (pending_id, waiter) = blocked_agent(agent, &task_id).await;
        pending.push(pending_id);
        blocked.push(waiter);
    }
    let started = Instant::now();
    futures_util::stream::iter(&pending)
        .for_each_concurrent(16, |pending_id| answer(answerer, pending_id))
        .await;
    let mut last = started;
    for waiter in blocked {
        last = last.max(waiter.await.unwrap());
    }
    last.saturating_duration_since(started)
}

/// One renewal round of [`CROWD`] attachment leases (what each replica does
/// every few seconds for the agents blocked on it).
async fn renewal(state: &AppState) -> Duration {
    let until = clarify_server::clock::now_micros() + 30_000_000;
    let leases: Vec<(String, i64)> = (0..CROWD)
        .map(|i| (format!("lease-{i:05}"), until))
        .collect();
    let mut times = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        clarify_server::db::replicas::attach_all(state.db(), &leases)
            .await
            .unwrap();
        times.push(started.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let database = TestDatabase::create().await;
    let first = replica(&database).await;
    let same = median_handover(&first, &first).await;
    let crowd_same = crowd(&first, &first).await;
    if !clarify_tests::testing_postgres() {
        println!("answer hand-over on SQLite (one replica):");
        println!("  one agent, median of {RUNS}:  {same:>10.2?}");
        println!(
            "  {CROWD} agents blocked at once: {crowd_same:>10.2?} until the last has its answer"
        );
        return;
    }
    let second = replica(&database).await;
    let across = median_handover(&first, &second).await;
    let crowd_across = crowd(&first, &second).await;
    let ratio = |x: Duration, base: Duration| x.as_secs_f64() / base.as_secs_f64();
    println!("answer hand-over on PostgreSQL, answer submitted -> agent's wait returns:");
    println!("  one agent, median of {RUNS}:");
    println!("    agent on the answering replica: {same:>10.2?}  (baseline)");
    println!(
        "    agent on another replica:       {across:>10.2?}  ({:.2}x baseline)",
        ratio(across, same)
    );
    println!(
        "  {CROWD} agents blocked at once, answered 16 at a time, until the last has its answer:"
    );
    println!("    agents on the answering replica: {crowd_same:>10.2?}  (baseline)");
    println!(
        "    agents on another replica:       {crowd_across:>10.2?}  ({:.2}x baseline)",
        ratio(crowd_across, crowd_same)
    );
    let renew = renewal(&first).await;
    println!("  renewing {CROWD} attachment leases (every 5 s per replica): {renew:>10.2?}");
}
