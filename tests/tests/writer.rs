//! The one writer (issue 31): units of work committed together, each
//! undoing only itself, and nothing acknowledged that is not on disk; the
//! read pool cannot write. On a real SQLite file (PostgreSQL has no writer
//! of ours: its transactions commit on their own).

use std::time::Duration;

use clarify_server::db::Db;
use clarify_tests::{TestDatabase, testing_postgres};

/// Concurrent units in the group test.
const UNITS: usize = 240;

async fn sqlite() -> Option<(TestDatabase, Db)> {
    if testing_postgres() {
        return None;
    }
    let database = TestDatabase::create().await;
    let db = Db::connect(database.url()).await.unwrap();
    Some((database, db))
}

async fn exists(db: &Db, id: &str) -> bool {
    let found: Option<(String,)> = sqlx::query_as("SELECT id FROM workspaces WHERE id = $1")
        .bind(id)
        .fetch_optional(db.pool())
        .await
        .unwrap();
    found.is_some()
}

const INSERT: &str =
    "INSERT INTO workspaces (id, name, owner_id, created_at) VALUES ($1, 'w', '', 0)";

/// What unit `i` of the group test does besides its own row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// Keeps its row.
    Keeps,
    /// Writes its row, then fails: only its own savepoint is undone.
    Fails,
    /// Writes its row and a row breaking a foreign key that SQLite checks
    /// only at COMMIT: the whole group's commit fails, and every unit in
    /// it must be told so.
    PoisonsTheCommit,
}

fn unit(i: usize) -> Unit {
    match i % 60 {
        _ if i == UNITS / 2 => Unit::PoisonsTheCommit,
        7 | 19 | 31 | 43 | 55 => Unit::Fails,
        _ => Unit::Keeps,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_if_and_only_if_on_disk_and_a_failure_undoes_only_its_unit() {
    let Some((database, db)) = sqlite().await else {
        return;
    };
    let before = db.write_counts();
    let units: Vec<_> = (0..UNITS)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move {
                let id = format!("w{i}");
                let kind = unit(i);
                let done = db
                    .write(async |c| {
                        sqlx::query(INSERT).bind(&id).execute(&mut *c).await?;
                        match kind {
                            Unit::Keeps => Ok(()),
                            Unit::Fails => Err(sqlx::Error::RowNotFound),
                            Unit::PoisonsTheCommit => {
                                sqlx::query("PRAGMA defer_foreign_keys = ON")
                                    .execute(&mut *c)
                                    .await?;
                                sqlx::query(
                                    "INSERT INTO task_sessions (id, task_id, state, \
                                     agent_token_hash, created_by, created_at, updated_at) \
                                     VALUES ($1, 'no such task', 'RUNNING', $1, '', 0, 0)",
                                )
                                .bind(&id)
                                .execute(&mut *c)
                                .await?;
                                Ok(())
                            }
                        }
                    })
                    .await;
                (i, done.is_ok())
            })
        })
        .collect();
    let mut acknowledged = 0;
    for handle in units {
        let (i, ok) = handle.await.unwrap();
        let id = format!("w{i}");
        assert_eq!(
            exists(&db, &id).await,
            ok,
            "unit {i} ({:?}) was told {ok}: what it was told must be what is on disk",
            unit(i)
        );
        if unit(i) != Unit::Keeps {
            assert!(!ok, "unit {i} ({:?}) cannot have been kept", unit(i));
        }
        acknowledged += usize::from(ok);
    }
    // Failing units never took their neighbours down: only the poisoned
    // commit did, a group of at most 64.
    let failing = (0..UNITS).filter(|&i| unit(i) != Unit::Keeps).count();
    let counts = db.write_counts();
    let commits = counts.commits - before.commits;
    assert_eq!(
        counts.units - before.units,
        acknowledged as u64,
        "the writer counts what it kept"
    );
    assert!(
        acknowledged >= UNITS - failing - 64,
        "{acknowledged} of {UNITS} kept"
    );
    assert!(
        commits < acknowledged as u64,
        "units that queued together were committed together: {commits} commits for {acknowledged} units"
    );
    // And the writer goes on after a failed commit.
    db.write(async |c| sqlx::query(INSERT).bind("after").execute(c).await)
        .await
        .unwrap();
    assert!(exists(&db, "after").await);
    drop(database);
}

#[tokio::test]
async fn a_unit_whose_caller_is_gone_is_undone_and_the_writer_goes_on() {
    let Some((_database, db)) = sqlite().await else {
        return;
    };
    // A request cancelled mid-transaction: its future, holding the
    // connection, is dropped.
    let abandoned = async {
        let tx = inserted(&db, "abandoned").await;
        std::future::pending::<()>().await;
        tx.commit().await.unwrap();
    };
    assert!(
        tokio::time::timeout(Duration::from_millis(50), abandoned)
            .await
            .is_err()
    );
    inserted(&db, "next").await.commit().await.unwrap();
    assert!(!exists(&db, "abandoned").await, "undone with its caller");
    assert!(exists(&db, "next").await);
    // An explicit rollback too.
    inserted(&db, "rolled back").await.rollback().await.unwrap();
    assert!(!exists(&db, "rolled back").await);
}

/// A unit that has written workspace `id`, not yet ended.
async fn inserted(db: &Db, id: &str) -> clarify_server::db::Tx {
    let mut tx = db.begin_write().await.unwrap();
    sqlx::query(INSERT)
        .bind(id)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx
}

#[tokio::test]
async fn the_read_pool_cannot_write() {
    let Some((_database, db)) = sqlite().await else {
        return;
    };
    let bypass = sqlx::query(INSERT).bind("bypass").execute(db.pool()).await;
    assert!(
        bypass.is_err(),
        "a write on the read pool must fail, not bypass the writer"
    );
    assert!(!exists(&db, "bypass").await);
}

#[tokio::test]
async fn the_writer_flushes_every_commit_unless_told_otherwise() {
    use clarify_server::db::{Options, Synchronous};
    if testing_postgres() {
        return;
    }
    // SQLite's `synchronous`: 2 is FULL (each commit on disk before it
    // returns), 1 is NORMAL; it is the writer's connection that commits.
    for (synchronous, expected) in [(Synchronous::Full, 2), (Synchronous::Normal, 1)] {
        let database = TestDatabase::create().await;
        let db = Db::connect_with(database.url(), Options { synchronous })
            .await
            .unwrap();
        let level: i64 = db
            .write(async |c| sqlx::query_scalar("PRAGMA synchronous").fetch_one(c).await)
            .await
            .unwrap();
        assert_eq!(level, expected, "{synchronous:?}");
    }
    let database = TestDatabase::create().await;
    let db = Db::connect(database.url()).await.unwrap();
    let level: i64 = db
        .write(async |c| sqlx::query_scalar("PRAGMA synchronous").fetch_one(c).await)
        .await
        .unwrap();
    assert_eq!(level, 2, "FULL by default");
}
