//! How the lists scale with history: the same 50 pending bundles listed
//! (`list_pending_questions_kandev`) and their task's page of `GET /tasks`
//! projected (T1, T2), over 0, 20 000 and 200 000 answered messages in the
//! task's sessions, in a real SQLite file, or a real PostgreSQL database
//! when `CLARIFY_TEST_POSTGRES_URL` is set. Prints the medians per size and
//! their ratio to the empty history baseline — flat means both read the
//! open-questions indexes, not the history.

use std::time::{Duration, Instant};

use clarify_server::auth::Caller;
use clarify_server::db::tasks::TaskFilter;
use clarify_server::lifecycle::discovery::PendingArgs;
use clarify_server::{AppState, Config};
use serde_json::json;

const PENDING: usize = 50;
const RUNS: usize = 60;

async fn seed_history(state: &AppState, session_id: &str, task_id: &str, count: usize) {
    let mut tx = state.db().begin_write().await.unwrap();
    for i in 0..count {
        let metadata = json!({
            "pending_id": format!("old-{i}"), "question_id": "q1", "question_index": 0,
            "question": {"question_id": "q1", "title": "", "prompt": "old", "options": []},
            "status": "answered", "response": {"question_id": "q1", "selected_options": [], "custom_text": "done"}
        });
        sqlx::query(
            "INSERT INTO task_session_messages (id, task_session_id, task_id, turn_id, type, content, metadata, created_at, updated_at) \
             VALUES ($1, $2, $3, 'old-turn', 'clarification_request', 'old', $4, $5, $5)",
        )
        .bind(format!("history-{i}"))
        .bind(session_id)
        .bind(task_id)
        .bind(metadata.to_string())
        .bind(i64::try_from(i).unwrap())
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    if state.db().backend() == clarify_server::db::Backend::Postgres {
        // As autovacuum would after a bulk load: PostgreSQL plans from
        // statistics.
        state
            .db()
            .write(async |c| sqlx::query("ANALYZE").execute(c).await)
            .await
            .unwrap();
    }
}

/// The median time of the pending list and of a page of tasks.
async fn median_times(history: usize) -> (Duration, Duration) {
    let database = clarify_tests::TestDatabase::create().await;
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    let state = AppState::new(db, Config::default()).await.unwrap();
    let lifecycle = &state.lifecycle;
    let now = clarify_server::clock::now_micros();
    clarify_tests::insert_task(state.db(), "task").await;
    let bundle: clarify_core::NewBundle = serde_json::from_value(json!({"questions": [
        {"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}]}))
    .unwrap();
    let mut sessions = Vec::new();
    for i in 0..PENDING {
        let session = clarify_server::db::sessions::Session {
            id: format!("session-{i}"),
            task_id: "task".into(),
            state: clarify_core::SessionState::Running,
            resume_target: String::new(),
            description: String::new(),
            created_by: String::new(),
            created_at: now,
            updated_at: now,
        };
        let hash = format!("hash-{i}");
        state
            .db()
            .write(async |c| clarify_server::db::sessions::insert(c, &session, &hash).await)
            .await
            .unwrap();
        lifecycle
            .asking
            .create_bundle(&session.id.as_str().into(), &bundle, false, None)
            .await
            .unwrap();
        sessions.push(session.id);
    }
    seed_history(&state, &sessions[0], "task", history).await;

    let args = PendingArgs {
        limit: Some(200),
        ..PendingArgs::default()
    };
    let mut lists = Vec::with_capacity(RUNS);
    let mut pages = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let page = lifecycle
            .reading
            .list_pending(&Caller::Unscoped, &args)
            .await
            .unwrap();
        lists.push(started.elapsed());
        assert_eq!(page.count, PENDING);
        let started = Instant::now();
        let tasks = lifecycle
            .reading
            .tasks_page(&Caller::Unscoped, TaskFilter::default(), "", Some(50))
            .await
            .unwrap();
        pages.push(started.elapsed());
        assert!(tasks.tasks[0].task_pending_action.is_some());
    }
    lists.sort();
    pages.sort();
    (lists[RUNS / 2], pages[RUNS / 2])
}

#[tokio::main]
async fn main() {
    let (list_baseline, page_baseline) = median_times(0).await;
    let backend = if clarify_tests::testing_postgres() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    println!(
        "on {backend}, {PENDING} pending bundles, median of {RUNS}: \
         list_pending_questions_kandev | a page of GET /tasks"
    );
    println!(
        "  history        0 messages: {list_baseline:>10.2?} | {page_baseline:>10.2?}  (baseline)"
    );
    // `LIST_HISTORY=2000` (comma-separated sizes) for a quick run.
    let sizes: Vec<usize> = std::env::var("LIST_HISTORY")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![20_000, 200_000]);
    for history in sizes {
        let (list, page) = median_times(history).await;
        let ratio = |d: Duration, base: Duration| d.as_secs_f64() / base.as_secs_f64();
        println!(
            "  history {history:>8} messages: {list:>10.2?} ({:.2}x) | {page:>10.2?} ({:.2}x)",
            ratio(list, list_baseline),
            ratio(page, page_baseline)
        );
    }
}
