//! How long an answer takes to reach the agent blocked on it: from the
//! answer's submission to the agent's wait returning, with the agent on the
//! same replica as the answerer (the baseline) and on another replica of the
//! same PostgreSQL database (the `LISTEN/NOTIFY` relay). Needs
//! `CLARIFY_TEST_POSTGRES_URL`; without it, measures SQLite's one replica.

use std::time::{Duration, Instant};

use clarify_server::auth::Caller;
use clarify_server::{AppState, Config};
use clarify_tests::TestDatabase;
use serde_json::json;

const RUNS: usize = 200;

async fn replica(database: &TestDatabase) -> AppState {
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    AppState::new(db, Config::default()).await.unwrap()
}

/// The median hand-over time with the agent on `agent` and the answer given
/// through `answerer`.
async fn median_handover(agent: &AppState, answerer: &AppState) -> Duration {
    let now = clarify_server::clock::now_micros();
    let task = clarify_server::db::tasks::Task {
        id: clarify_server::ids::new_id(),
        workspace_id: String::new(),
        title: "bench".into(),
        description: String::new(),
        created_at: now,
        updated_at: now,
    };
    clarify_server::db::tasks::insert(agent.db().pool(), &task)
        .await
        .unwrap();
    let bundle: clarify_core::NewBundle = serde_json::from_value(json!({"questions": [
        {"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]}))
    .unwrap();
    let submission: clarify_core::Submission = serde_json::from_value(
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
    )
    .unwrap();
    let mut times = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let session = clarify_server::db::sessions::Session {
            id: clarify_server::ids::new_id(),
            task_id: task.id.clone(),
            state: "RUNNING".into(),
            resume_target: String::new(),
            created_at: now,
            updated_at: now,
        };
        clarify_server::db::sessions::insert(
            agent.db().pool(),
            &session,
            &format!("hash-{i}-{}", task.id),
        )
        .await
        .unwrap();
        let (created, mut waiting) = agent
            .lifecycle
            .create_attached(&session.id, &bundle)
            .await
            .unwrap();
        let lifecycle = agent.lifecycle.clone();
        let pending_id = created.pending_id.clone();
        let blocked = tokio::spawn(async move {
            lifecycle
                .await_outcome(&pending_id, &mut waiting, Duration::from_secs(30))
                .await
                .map(|_| Instant::now())
        });
        let started = Instant::now();
        let body = answerer
            .lifecycle
            .resolve(&Caller::Unscoped, &created.pending_id, &submission)
            .await
            .unwrap();
        assert!(body.claimed);
        let reached = blocked.await.unwrap().expect("the agent got the answer");
        times.push(reached.saturating_duration_since(started));
    }
    times.sort();
    times[RUNS / 2]
}

#[tokio::main]
async fn main() {
    let database = TestDatabase::create().await;
    let first = replica(&database).await;
    let same = median_handover(&first, &first).await;
    if !clarify_tests::testing_postgres() {
        println!("answer hand-over on SQLite, median of {RUNS}: {same:>10.2?} (one replica)");
        return;
    }
    let second = replica(&database).await;
    let across = median_handover(&first, &second).await;
    let ratio = across.as_secs_f64() / same.as_secs_f64();
    println!(
        "answer hand-over on PostgreSQL, median of {RUNS}, answer submitted -> agent's wait returns:"
    );
    println!("  agent on the answering replica: {same:>10.2?}  (baseline)");
    println!("  agent on another replica:       {across:>10.2?}  ({ratio:.2}x baseline)");
}
