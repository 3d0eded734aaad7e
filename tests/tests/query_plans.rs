//! The database answers the hot queries from indexes: the pending list
//! (DESIGN "list_pending_questions_kandev answers from indexes") and the
//! lookup of a bundle by pending_id never scan the message history — on
//! SQLite and on PostgreSQL.

use clarify_server::db::Backend;
use clarify_server::db::pending::{PendingQuery, page_sql};
use clarify_tests::TestServer;
use sqlx::Executor as _;

/// A bound value of the right type for each parameter of the query.
#[derive(Clone, Copy)]
enum Param {
    Text,
    Int,
}

/// The database's plan for `sql`, one line per step.
async fn plan(server: &TestServer, sql: &str, params: &[Param]) -> Vec<String> {
    let mut conn = server.db().pool().acquire().await.unwrap();
    let explain = match server.db().backend() {
        Backend::Sqlite => "EXPLAIN QUERY PLAN",
        Backend::Postgres => {
            // PostgreSQL plans from statistics: give it a long answered
            // history to plan against, as a busy deployment has.
            let (_, session, _) = server.session(None).await;
            sqlx::query(
                "INSERT INTO task_session_messages \
                 (id, task_session_id, turn_id, type, metadata, created_at, updated_at) \
                 SELECT 'old' || i, $1, 'old-turn', 'clarification_request', \
                     '{\"pending_id\": \"old' || i || '\", \"question_id\": \"q1\", \"status\": \"answered\"}', \
                     i, i \
                 FROM generate_series(1, 20000) AS i \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(session)
            .execute(&mut *conn)
            .await
            .unwrap();
            conn.execute("ANALYZE").await.unwrap();
            "EXPLAIN"
        }
    };
    let sql = sqlx::AssertSqlSafe(format!("{explain} {sql}"));
    let mut query = sqlx::query(sql);
    for param in params {
        query = match param {
            Param::Text => query.bind("x"),
            Param::Int => query.bind(1_i64),
        };
    }
    let rows = query.fetch_all(&mut *conn).await.unwrap();
    let detail_column = match server.db().backend() {
        Backend::Sqlite => 3,
        Backend::Postgres => 0,
    };
    rows.iter()
        .map(|row| sqlx::Row::get::<String, _>(row, detail_column))
        .collect()
}

fn assert_no_history_scan(plan: &[String]) {
    for step in plan {
        let step = step.trim_start().trim_start_matches("-> ");
        let sqlite_scan = (step.starts_with("SCAN") && step.contains("task_session_messages")
            || step.starts_with("SCAN m")
            || step.starts_with("SCAN b")
            || step.starts_with("SCAN q"))
            && !step.contains("USING INDEX")
            && !step.contains("USING COVERING INDEX");
        let postgres_scan = step.starts_with("Seq Scan on task_session_messages");
        assert!(
            !sqlite_scan && !postgres_scan,
            "a full scan of the message history: {step}\n{plan:#?}"
        );
    }
}

#[tokio::test]
async fn the_pending_list_walks_the_open_questions_index() {
    let server = TestServer::start().await;
    let backend = server.db().backend();
    for user in [None, Some("someone")] {
        for workspace in [None, Some("ws")] {
            let query = PendingQuery {
                user,
                workspace_id: workspace,
                limit: 50,
                ..PendingQuery::default()
            };
            use Param::{Int, Text};
            let params = [Text, Text, Int, Int, Text, Int];
            let steps = plan(&server, &page_sql(backend, &query), &params).await;
            assert_no_history_scan(&steps);
            assert!(
                steps
                    .iter()
                    .any(|s| s.contains("task_session_messages_open")),
                "uses the open-questions index: {steps:#?}"
            );
            // Issue 17: the walk follows the index in page order and stops
            // at the limit; sorting would read every waiting bundle first
            // (40 ms a page at 10,000 of them).
            assert!(
                !steps.iter().any(|s| s.contains("TEMP B-TREE")),
                "sorts instead of walking in order: {steps:#?}"
            );
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_bundle_is_found_by_pending_id_through_its_index() {
    let server = TestServer::start().await;
    let steps = plan(
        &server,
        "SELECT m.id FROM task_session_messages m WHERE m.pending_id = $1 AND m.type = 'clarification_request'",
        &[Param::Text],
    )
    .await;
    assert!(
        steps
            .iter()
            .any(|s| s.contains("task_session_messages_pending_id")),
        "{steps:#?}"
    );
    assert_no_history_scan(&steps);
    server.stop().await;
}

#[tokio::test]
async fn the_expiry_sweep_reads_only_the_open_expiring_questions() {
    let server = TestServer::start().await;
    let sql = clarify_server::db::clarification::due_sql();
    let steps = plan(&server, &sql, &[Param::Int, Param::Int]).await;
    assert_no_history_scan(&steps);
    // SQLite takes migration 0009's index of expiring questions;
    // PostgreSQL, on a small table, the open questions' index: both hold
    // open questions only, never the answered history.
    assert!(
        steps.iter().any(|s| {
            s.contains("task_session_messages_expiring") || s.contains("task_session_messages_open")
        }),
        "uses an index of open questions: {steps:#?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn notification_delivery_reads_only_the_queued_rows() {
    let server = TestServer::start().await;
    // A day of delivered notices, as a busy deployment keeps.
    server
        .db()
        .write(async |c| {
            sqlx::query(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) \
         INSERT INTO notification_outbox (id, target, event_key, pending_id, event, body, \
             state, attempts, next_at, deadline, created_at, updated_at) \
         SELECT 'sent' || i, 'http://hook', 'p' || i || ':waiting', 'p' || i, 'waiting', '{}', \
             'delivered', 1, i, i, i, i FROM n",
            )
            .execute(c)
            .await
        })
        .await
        .unwrap();
    analyze(&server).await;
    // Migration 0010's and 0012's indexes hold queued rows only:
    // delivered and given up notices (a day of them is kept) are never
    // read by the sweep, neither to find the targets due nor to read one
    // target's rows (issue 26: target by target).
    let queued = ["notification_outbox_due", "notification_outbox_target_due"];
    let sql = clarify_server::db::notifications::due_targets_sql();
    let steps = plan(&server, &sql, &[Param::Int, Param::Int]).await;
    assert!(
        steps
            .iter()
            .any(|s| queued.iter().any(|index| s.contains(index))),
        "finds the targets from an index of queued rows: {steps:#?}"
    );
    let sql = clarify_server::db::notifications::due_for_sql();
    let steps = plan(&server, &sql, &[Param::Text, Param::Int, Param::Int]).await;
    assert!(
        steps
            .iter()
            .any(|s| queued.iter().any(|index| s.contains(index))),
        "reads a target's rows from an index of queued rows: {steps:#?}"
    );
    server.stop().await;
}

/// Neither scans the history nor walks one session's messages through the
/// (session, created_at) index: a session's open questions and its kept
/// answers have partial indexes of their own (migration 0007).
fn assert_no_session_walk(plan: &[String]) {
    assert_no_history_scan(plan);
    for step in plan {
        assert!(
            !step.contains("task_session_messages_session"),
            "walks a session's whole history: {step}\n{plan:#?}"
        );
    }
}

/// The pending-action projection (T1, T2) of a page of tasks, a session's
/// active bundles (D4) and the answers kept for an agent (pull delivery):
/// issue 17's load test found a page of 50 tasks taking 50 ms once their
/// sessions had a few hundred answers each.
#[tokio::test]
async fn a_sessions_open_questions_come_from_their_own_index() {
    use clarify_server::db::clarification::{
        active_in_session_sql, kept_for_pickup_sql, sessions_with_active_sql,
    };
    let server = TestServer::start().await;
    let sqlite = server.db().backend() == Backend::Sqlite;
    for (sql, params, index) in [
        (
            active_in_session_sql(),
            vec![Param::Text],
            "task_session_messages_open_by_session",
        ),
        (
            sessions_with_active_sql(3),
            vec![Param::Text; 3],
            "task_session_messages_open_by_session",
        ),
        (
            kept_for_pickup_sql(),
            vec![Param::Text],
            "task_session_messages_kept_by_session",
        ),
        (
            clarify_server::db::publishing::publishing_sql(),
            vec![Param::Text],
            "task_session_messages_open_by_session",
        ),
        (
            clarify_server::db::clarification::detach_completed_sql(server.db().backend()),
            vec![Param::Int, Param::Text],
            "task_session_messages_open_by_session",
        ),
    ] {
        let steps = plan(&server, &sql, &params).await;
        assert_no_session_walk(&steps);
        // A page of tasks' sessions may well start from every open
        // question; one session's reads must not.
        if sql != sessions_with_active_sql(3) {
            assert_index_searched(&steps, index);
        }
        if sqlite {
            assert!(
                steps.iter().any(|s| s.contains(index)),
                "{index}: {steps:#?}"
            );
        }
    }
    server.stop().await;
}

/// Every read of `index` is bounded by the bound session, not a walk of
/// the whole index: the open questions of every session are read for one
/// session's otherwise. On PostgreSQL the key must be the bound value
/// itself: a session correlated to an outer row leaves the planner free to
/// walk the index and join afterwards, as it did for the publish read under
/// load (~1,000 index probes per answer with 3,000 open questions; answers
/// through HTTP at 340/s rather than 780, `docs/MEASURED.md`).
fn assert_index_searched(plan: &[String], index: &str) {
    for (at, step) in plan.iter().enumerate() {
        if !step.contains(index) {
            continue;
        }
        let bounded = if step.contains("USING") && !step.contains("Index") {
            // SQLite: SEARCH uses the key, SCAN walks the whole index.
            step.trim_start().starts_with("SEARCH")
        } else {
            // PostgreSQL: the node's own lines, up to its first child.
            plan[at + 1..]
                .iter()
                .take_while(|line| !line.contains("->"))
                .any(|line| line.contains("Index Cond") && line.contains("task_session_id = 'x'"))
        };
        assert!(bounded, "walks all of {index}: {step}\n{plan:#?}");
    }
}

/// A user's open sessions are counted from migration 0014's index on
/// (created_by, state), never by scanning every session ever made: the
/// count runs on every session created (issue 26, `--max-open-sessions`).
#[tokio::test]
async fn counting_a_user_s_open_sessions_reads_an_index() {
    let server = TestServer::start().await;
    // Many users' sessions, most of them ended, as a long-lived server has.
    clarify_tests::insert_task(server.db(), "t").await;
    server
        .db()
        .write(async |c| {
            sqlx::query(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) \
         INSERT INTO task_sessions (id, task_id, state, agent_token_hash, created_by, \
             created_at, updated_at) \
         SELECT 's' || i, 't', CASE WHEN i % 10 = 0 THEN 'RUNNING' ELSE 'COMPLETED' END, \
             'h' || i, 'u' || (i % 400), i, i FROM n",
            )
            .execute(c)
            .await
        })
        .await
        .unwrap();
    analyze(&server).await;
    let sql = clarify_server::db::sessions::open_count_sql();
    let steps = plan(&server, &sql, &[Param::Text]).await;
    assert!(
        steps.iter().any(|s| s.contains("task_sessions_created_by")),
        "counts from the index: {steps:#?}"
    );
    server.stop().await;
}

/// Issue 45 item 7-P4: a user's open questions are counted on every new
/// ask under auth: through their sessions in migration 0014's index on
/// (created_by, state), then each session's open questions in migration
/// 0007's partial index, never a table of all sessions or all questions.
#[tokio::test]
async fn counting_a_user_s_open_questions_reads_indexes() {
    let server = TestServer::start().await;
    clarify_tests::insert_task(server.db(), "t").await;
    insert_series(
        &server,
        20000,
        &[
            "INSERT INTO task_sessions (id, task_id, state, agent_token_hash, created_by, \
             created_at, updated_at) \
         SELECT 's' || i, 't', CASE WHEN i % 10 = 0 THEN 'WAITING_FOR_INPUT' \
             ELSE 'COMPLETED' END, 'h' || i, 'u' || (i % 400), i, i FROM n",
            "INSERT INTO task_session_turns (id, task_session_id, started_at, created_at) \
         SELECT 'turn' || i, 's' || i, i, i FROM n",
            "INSERT INTO task_session_messages (id, task_session_id, turn_id, type, \
             metadata, created_at, updated_at) \
         SELECT 'm' || i, 's' || i, 'turn' || i, 'clarification_request', \
             '{\"pending_id\": \"p' || i || '\", \"question_id\": \"q1\", \
               \"status\": \"' || CASE WHEN i % 10 = 0 THEN 'pending' \
               ELSE 'answered' END || '\"}', i, i FROM n",
        ],
    )
    .await;
    analyze(&server).await;
    let sql = clarify_server::db::sessions::open_questions_sql();
    let steps = plan(&server, &sql, &[Param::Text]).await;
    for index in [
        "task_sessions_created_by",
        "task_session_messages_open_by_session",
    ] {
        assert!(
            steps.iter().any(|s| s.contains(index)),
            "{index}: {steps:#?}"
        );
    }
    assert!(
        !steps
            .iter()
            .any(|s| s.contains("Seq Scan") || s.trim_start().starts_with("SCAN")),
        "no table walked: {steps:#?}"
    );
    server.stop().await;
}

/// Statistics for the planners, as a long-lived database has them.
/// Runs each of `inserts` over `n(i)` for i in 1..=`rows`, in one unit of
/// work: a history that makes a bad plan show.
async fn insert_series(server: &TestServer, rows: u32, inserts: &[&str]) {
    server
        .db()
        .write(async |c| {
            for insert in inserts {
                let sql = format!(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n \
                     WHERE i < {rows}) {insert}"
                );
                sqlx::query(sqlx::AssertSqlSafe(sql))
                    .execute(&mut *c)
                    .await?;
            }
            Ok::<_, sqlx::Error>(())
        })
        .await
        .unwrap();
}

async fn analyze(server: &TestServer) {
    server
        .db()
        .write(async |c| sqlx::query("ANALYZE").execute(c).await)
        .await
        .unwrap();
}

/// What answers a busy server finds: many sessions, each waiting on one
/// open question in its current turn. Reading one session's publish state
/// (every answer does, `lifecycle::publish`) touches that session's
/// question only (`assert_index_searched`).
#[tokio::test]
async fn one_sessions_publish_read_is_bounded_by_open_questions_elsewhere() {
    let server = TestServer::start().await;
    clarify_tests::insert_task(server.db(), "t").await;
    insert_series(
        &server,
        3000,
        &[
            "INSERT INTO task_sessions (id, task_id, state, agent_token_hash, created_by, \
             created_at, updated_at) \
         SELECT 's' || i, 't', 'WAITING_FOR_INPUT', 'h' || i, 'u', i, i FROM n",
            "INSERT INTO task_session_turns (id, task_session_id, started_at, created_at) \
         SELECT 'turn' || i, 's' || i, i, i FROM n",
            "INSERT INTO task_session_messages \
             (id, task_session_id, turn_id, type, metadata, created_at, updated_at) \
         SELECT 'm' || i, 's' || i, 'turn' || i, 'clarification_request', \
             '{\"pending_id\": \"p' || i || '\", \"question_id\": \"q1\", \
               \"status\": \"pending\"}', i, i FROM n",
        ],
    )
    .await;
    analyze(&server).await;
    let sql = clarify_server::db::publishing::publishing_sql();
    let steps = plan(&server, &sql, &[Param::Text]).await;
    assert_index_searched(&steps, "task_session_messages_open_by_session");
    server.stop().await;
}

/// Issue 49 items 2 and 5: the Activity page's read and the audit
/// export's walk search the bundles asked in their span by an index
/// (migration 0026's), never walking the whole history — not even through
/// an index of every bundle: a long-lived server's page costs its span,
/// not its years.
#[tokio::test]
async fn the_activity_read_walks_only_its_span() {
    let server = TestServer::start().await;
    let backend = server.db().backend();
    for scoped in [false, true] {
        let sql = clarify_server::db::activity::asked_since_sql(backend, scoped);
        let params = [Param::Text, Param::Int, Param::Int, Param::Int];
        assert_span_searched(&plan(&server, &sql, &params).await);
        for after in [false, true] {
            let sql = clarify_server::db::audit::page_sql(scoped, after);
            let params = [
                Param::Text,
                Param::Int,
                Param::Int,
                Param::Int,
                Param::Text,
                Param::Int,
            ];
            assert_span_searched(&plan(&server, &sql, &params).await);
        }
    }
    server.stop().await;
}

fn assert_span_searched(plan: &[String]) {
    assert_no_history_scan(plan);
    let walked = plan
        .iter()
        .any(|step| step.trim_start().starts_with("SCAN m USING"));
    let searched = plan.iter().any(|step| {
        step.contains("task_session_messages_asked")
            && (step.trim_start().starts_with("SEARCH") || step.contains("Index"))
    });
    assert!(!walked && searched, "not searched by its span:\n{plan:#?}");
}
