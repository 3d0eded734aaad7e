//! The answer path's throughput (issue 17), in process: 16 answerers at
//! once through `ResolveBundle` on distinct questions, (1) each answer
//! resuming its agent through a webhook (a real HTTP receiver), (2) each
//! answer handed to its agent blocked on it. The baseline, in the same run
//! on the same database file and pool, is the raw claim transaction
//! (BEGIN IMMEDIATE, one guarded UPDATE, COMMIT) at the same concurrency:
//! the rate the database itself allows, so the ratios mean the same on any
//! machine. On PostgreSQL when `CLARIFY_TEST_POSTGRES_URL` is set.
//!
//! `ANSWERS=500 ANSWER_ROUNDS=1 cargo bench -p clarify-tests --bench answers` for a
//! quick run (three rounds by default, medians printed).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clarify_core::Channel;
use clarify_server::auth::Caller;
use clarify_server::lifecycle::Via;
use clarify_server::{AppState, Config};
use clarify_tests::{Receiver, TestDatabase, insert_session};
use serde_json::json;

/// Answerers at once: 16, or `ANSWERERS`.
fn concurrency() -> usize {
    std::env::var("ANSWERERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16)
}

fn bundle() -> clarify_core::NewBundle {
    serde_json::from_value(json!({"questions": [
        {"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]}))
    .unwrap()
}

fn submission() -> clarify_core::Submission {
    serde_json::from_value(
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
    )
    .unwrap()
}

/// `count` sessions resumed through `resume_target` (JSON, or `""`), each
/// with one open question; returns their pending ids.
async fn questions(state: &AppState, count: usize, resume_target: &str) -> Vec<String> {
    let task = clarify_server::ids::new_id();
    clarify_tests::insert_task(state.db(), &task).await;
    let mut pending = Vec::with_capacity(count);
    for _ in 0..count {
        let session = insert_session(state.db(), &task, resume_target).await;
        let created = state
            .lifecycle
            .asking
            .create_bundle(&session.as_str().into(), &bundle(), false, None)
            .await
            .unwrap();
        pending.push(created.pending_id.into_string());
    }
    pending
}

/// `count` agents, each blocked on a question of its own session.
async fn blocked_agents(
    state: &AppState,
    count: usize,
) -> (
    Vec<String>,
    Vec<tokio::task::JoinHandle<clarify_server::lifecycle::WaitOutcome>>,
) {
    let task = clarify_server::ids::new_id();
    clarify_tests::insert_task(state.db(), &task).await;
    let mut pending = Vec::with_capacity(count);
    let mut blocked = Vec::with_capacity(count);
    for _ in 0..count {
        let session = insert_session(state.db(), &task, "").await;
        let (created, mut waiting) = state
            .lifecycle
            .asking
            .create_attached(&session.as_str().into(), &bundle(), None)
            .await
            .unwrap();
        let lifecycle = state.lifecycle.clone();
        let pending_id = created.pending_id.clone();
        blocked.push(tokio::spawn(async move {
            lifecycle
                .reading
                .await_outcome(&pending_id, &mut waiting, Duration::from_secs(300))
                .await
                .expect("the agent got its answer")
        }));
        pending.push(created.pending_id.into_string());
    }
    (pending, blocked)
}

/// Runs `work` on every item, [`concurrency`] at a time; returns items/s.
async fn rate<F, Fut>(items: Vec<String>, work: F) -> f64
where
    F: Fn(String) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let total = items.len();
    let items = Arc::new(items);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency())
        .map(|_| {
            let (items, next, work) = (items.clone(), next.clone(), work.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    work(item.clone()).await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    total as f64 / started.elapsed().as_secs_f64()
}

/// The raw claim: the guarded UPDATE of `ResolveBundle`'s claim, alone in
/// a write transaction.
async fn raw_claims(state: &AppState, pending: Vec<String>) -> f64 {
    let state = state.clone();
    rate(pending, move |pending_id| {
        let state = state.clone();
        async move {
            let mut tx = state.db().begin_write().await.unwrap();
            let done = sqlx::query(
                "UPDATE task_session_messages SET updated_at = updated_at + 1 \
                 WHERE pending_id = $1 AND type = 'clarification_request' \
                 AND clarification_status IN ('', 'pending')",
            )
            .bind(&pending_id)
            .execute(&mut *tx)
            .await
            .unwrap();
            assert_eq!(done.rows_affected(), 1);
            tx.commit().await.unwrap();
        }
    })
    .await
}

/// The resume's own cost: the same webhook POSTed through the server's
/// webhook client with no database work at all.
async fn webhook_posts(url: &str, count: usize) -> f64 {
    use clarify_server::resume::{Sent, WebhookNetworks, Webhooks};
    let webhooks = Webhooks::new(WebhookNetworks::open());
    let url = url.to_owned();
    let body = json!({"session_id": "s", "task_id": "t", "pending_id": "p",
        "prompt": "The user answered: a", "response": {}})
    .to_string();
    rate(vec![String::new(); count], move |_| {
        let (webhooks, url, body) = (webhooks.clone(), url.clone(), body.clone());
        async move {
            assert_eq!(
                webhooks.post(&url, body, &[], "bench").await,
                Sent::Accepted
            );
        }
    })
    .await
}

/// What a statement costs alone (one trip to the database) and inside a
/// batch of ten (one trip for all), one at a time: in microseconds each.
async fn trip_costs(state: &AppState) -> (f64, f64) {
    use clarify_server::db::batch::Batch;
    const STATEMENTS: u32 = 5000;
    let db = state.db();
    let mut conn = db.pool().acquire().await.unwrap();
    let started = Instant::now();
    for _ in 0..STATEMENTS {
        sqlx::query("SELECT 1").execute(&mut *conn).await.unwrap();
    }
    let alone = started.elapsed().as_secs_f64() * 1e6 / f64::from(STATEMENTS);
    let started = Instant::now();
    for _ in 0..STATEMENTS / 10 {
        let mut batch = Batch::new();
        for i in 0..10 {
            batch.push("SELECT $1".into(), vec![i64::from(i).into()]);
        }
        batch.run(&mut conn, db.backend()).await.unwrap();
    }
    let batched = started.elapsed().as_secs_f64() * 1e6 / f64::from(STATEMENTS);
    (alone, batched)
}

async fn answers(state: &AppState, pending: Vec<String>) -> f64 {
    let state = state.clone();
    rate(pending, move |pending_id| {
        let state = state.clone();
        async move {
            let body = state
                .lifecycle
                .resolving
                .resolve(
                    &Caller::Unscoped,
                    &Via::channel(Channel::Rest),
                    &pending_id.as_str().into(),
                    &submission(),
                )
                .await
                .unwrap();
            assert!(body.claimed);
        }
    })
    .await
}

#[tokio::main]
async fn main() {
    use clarify_server::db::Synchronous;
    // SQLite both ways (issue 31: FULL is the default, NORMAL the old
    // trade), each on a database of its own; PostgreSQL has one.
    // `ANSWERS_SYNCHRONOUS=full` (or `normal`) measures that one only,
    // e.g. under `strace -f -c -e trace=fsync,fdatasync` to count flushes.
    let only = std::env::var("ANSWERS_SYNCHRONOUS").unwrap_or_default();
    if clarify_tests::testing_postgres() {
        measure("PostgreSQL", Synchronous::default()).await;
    } else {
        if only != "normal" {
            measure("SQLite, synchronous = FULL", Synchronous::Full).await;
        }
        if only != "full" {
            measure("SQLite, synchronous = NORMAL", Synchronous::Normal).await;
        }
    }
}

async fn measure(backend: &str, synchronous: clarify_server::db::Synchronous) {
    let count: usize = std::env::var("ANSWERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let database = TestDatabase::create().await;
    let options = clarify_server::db::Options { synchronous };
    let db = clarify_server::db::Db::connect_with(database.url(), options)
        .await
        .unwrap();
    let state = AppState::new(db, Config::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let webhook = json!({"webhook_url": receiver.url()}).to_string();

    // Rounds, each measuring all three, so that a slow spell of the
    // machine weighs on the baseline as on the rest; medians are printed.
    let rounds: usize = std::env::var("ANSWER_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let (mut baselines, mut resumes, mut attaches) = (Vec::new(), Vec::new(), Vec::new());
    let mut posts = Vec::new();
    // The writer's commits during each kind of answer (the last round's):
    // under FULL each is one flush of the log to disk.
    let (mut resume_writes, mut attach_writes) = (Writes::default(), Writes::default());
    for _ in 0..rounds {
        posts.push(webhook_posts(&receiver.url(), count).await);
        baselines.push(raw_claims(&state, questions(&state, count, "").await).await);
        let before = receiver.count();
        let pending = questions(&state, count, &webhook).await;
        let counted = state.db().write_counts();
        resumes.push(answers(&state, pending).await);
        resume_writes = Writes::since(counted, state.db().write_counts(), count);
        assert!(
            receiver.count() - before >= count,
            "every agent was resumed"
        );

        // Agents blocked on their questions.
        let (pending, blocked) = blocked_agents(&state, count).await;
        let counted = state.db().write_counts();
        attaches.push(answers(&state, pending).await);
        attach_writes = Writes::since(counted, state.db().write_counts(), count);
        for agent in blocked {
            let outcome = agent.await.unwrap();
            assert!(matches!(
                outcome,
                clarify_server::lifecycle::WaitOutcome::Resolved(_)
            ));
        }
        println!(
            "  round {}: raw {:.0}/s, webhook {:.0}/s, blocked {:.0}/s",
            baselines.len(),
            baselines[baselines.len() - 1],
            resumes[resumes.len() - 1],
            attaches[attaches.len() - 1]
        );
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    // Each round's ratio pairs figures taken moments apart.
    let ratios = |v: &[f64]| -> Vec<f64> { v.iter().zip(&baselines).map(|(x, b)| x / b).collect() };
    let (resumed_ratio, attached_ratio) = (median(ratios(&resumes)), median(ratios(&attaches)));
    let (baseline, resumed, attached) = (median(baselines), median(resumes), median(attaches));
    let posted = median(posts);
    let (alone, batched) = trip_costs(&state).await;

    println!(
        "answers on {backend}, {count} each, {} at a time, median of {rounds} rounds:",
        concurrency()
    );
    println!("  raw claim transaction (baseline): {baseline:>8.0}/s");
    println!(
        "  answer resuming its agent by webhook: {resumed:>8.0}/s ({resumed_ratio:.3}x baseline, median of the rounds' ratios)"
    );
    println!(
        "  the resume's webhook POST alone, no database: {posted:>8.0}/s (what a webhook \
         answer spends besides the database: 1/{posted:.0} s of its 1/{resumed:.0} s)"
    );
    println!(
        "  answer to an agent blocked on it:     {attached:>8.0}/s ({attached_ratio:.3}x baseline, median of the rounds' ratios)"
    );
    if state.db().write_counts().commits > 0 {
        println!("  writes resuming by webhook: {resume_writes}");
        println!("  writes to blocked agents:   {attach_writes}");
    }
    let total = state.db().write_counts();
    if total.commits > 0 {
        println!(
            "  the writer over the whole run, setup included: {} units in {} commits",
            total.units, total.commits
        );
    }
    println!(
        "  a statement alone, one trip to the connection: {alone:>6.1} us; \
         in a batch of ten, one trip for all: {batched:>6.1} us each"
    );
}

/// The writer's work during one kind of answer.
#[derive(Debug, Default, Clone, Copy)]
struct Writes {
    units: u64,
    commits: u64,
    answers: usize,
}

impl Writes {
    fn since(
        before: clarify_server::db::WriteCounts,
        after: clarify_server::db::WriteCounts,
        answers: usize,
    ) -> Self {
        Self {
            units: after.units - before.units,
            commits: after.commits - before.commits,
            answers,
        }
    }
}

impl std::fmt::Display for Writes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let per = |n: u64, d: f64| n as f64 / d.max(1.0);
        write!(
            f,
            "{:.2} units of work and {:.3} commits (fsyncs under FULL) per answer; {:.1} units per commit",
            per(self.units, self.answers as f64),
            per(self.commits, self.answers as f64),
            per(self.units, self.commits as f64),
        )
    }
}
