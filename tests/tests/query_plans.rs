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
