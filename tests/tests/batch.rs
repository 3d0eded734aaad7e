//! The statement batch (issue 17) on a real database: each step reports its
//! own rows and changes, in order, whatever order a step's parameters are
//! written in; quoted `$1` is text, not a parameter; a failing step stops
//! the batch and the transaction undoes what the steps before it did. On
//! PostgreSQL when `CLARIFY_TEST_POSTGRES_URL` is set.

use clarify_server::db::Db;
use clarify_server::db::batch::Batch;
use clarify_tests::{TestDatabase, insert_session, insert_task};
use sqlx::Row as _;

async fn database() -> (TestDatabase, Db, String, [String; 2]) {
    let database = TestDatabase::create().await;
    let db = Db::connect(database.url()).await.unwrap();
    let task = clarify_server::ids::new_id();
    insert_task(&db, &task).await;
    let mut sessions = [
        insert_session(&db, &task, "").await,
        insert_session(&db, &task, "").await,
    ];
    sessions.sort();
    (database, db, task, sessions)
}

async fn updated_at(db: &Db, session: &str) -> i64 {
    sqlx::query_scalar("SELECT updated_at FROM task_sessions WHERE id = $1")
        .bind(session)
        .fetch_one(db.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn each_step_reports_its_own_rows_and_changes() {
    let (_database, db, task, [first, second]) = database().await;
    let mut tx = db.begin_write().await.unwrap();
    let mut batch = Batch::new();
    let read = batch.push(
        "SELECT id FROM task_sessions WHERE task_id = $1 ORDER BY id".into(),
        vec![task.as_str().into()],
    );
    let both = batch.push(
        "UPDATE task_sessions SET updated_at = $1 WHERE task_id = $2".into(),
        vec![7.into(), task.as_str().into()],
    );
    let none = batch.push(
        "UPDATE task_sessions SET updated_at = $1 WHERE id = $2".into(),
        vec![8.into(), "no such session".into()],
    );
    // Parameters written out of order, and a quoted `$1` that is text.
    let returning = batch.push(
        "UPDATE task_sessions SET updated_at = $2 WHERE id = $1 AND '$1' = '$1' RETURNING id"
            .into(),
        vec![second.as_str().into(), 9.into()],
    );
    let seen = batch.push(
        "SELECT updated_at FROM task_sessions WHERE id = $1".into(),
        vec![second.as_str().into()],
    );
    let done = batch.run(&mut tx, db.backend()).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(done.len(), 5, "one result per step");
    assert_eq!(
        done[read].distinct_texts().unwrap(),
        [first.as_str(), second.as_str()]
    );
    assert_eq!(done[both].affected, 2);
    assert!(done[both].rows.is_empty());
    assert_eq!(done[none].affected, 0);
    assert_eq!(done[returning].affected, 1);
    assert_eq!(done[returning].distinct_texts().unwrap(), [second.as_str()]);
    let later: i64 = done[seen].rows[0].try_get(0).unwrap();
    assert_eq!(later, 9, "a step sees the steps before it");
    assert_eq!(updated_at(&db, &first).await, 7);
    assert_eq!(updated_at(&db, &second).await, 9);
}

#[tokio::test]
async fn a_failing_step_stops_the_batch_and_its_transaction_undoes_it() {
    let (_database, db, _task, [first, second]) = database().await;
    let before = updated_at(&db, &first).await;
    let mut tx = db.begin_write().await.unwrap();
    let mut batch = Batch::new();
    batch.push(
        "UPDATE task_sessions SET updated_at = $1 WHERE id = $2".into(),
        vec![1.into(), first.as_str().into()],
    );
    // A copy of an existing row: its keys are taken, so this step fails.
    batch.push(
        "INSERT INTO task_sessions \
         (id, task_id, state, agent_token_hash, resume_target, created_at, updated_at) \
         SELECT id, task_id, state, agent_token_hash, resume_target, created_at, updated_at \
         FROM task_sessions WHERE id = $1"
            .into(),
        vec![second.as_str().into()],
    );
    batch.push(
        "UPDATE task_sessions SET updated_at = $1 WHERE id = $2".into(),
        vec![2.into(), second.as_str().into()],
    );
    assert!(batch.run(&mut tx, db.backend()).await.is_err());
    drop(tx);
    assert_eq!(
        updated_at(&db, &first).await,
        before,
        "undone with the transaction"
    );
    assert_ne!(
        updated_at(&db, &second).await,
        2,
        "the step after the failure never ran"
    );
}
