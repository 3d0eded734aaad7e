//! The database answers the hot queries from indexes: the pending list
//! (DESIGN "list_pending_questions_kandev answers from indexes") and the
//! lookup of a bundle by pending_id never scan the message history.

use clarify_server::db::Backend;
use clarify_server::db::pending::{PendingQuery, page_sql};
use clarify_tests::TestServer;

/// SQLite's plan for `sql`, one detail line per step.
async fn plan(server: &TestServer, sql: &str, binds: usize) -> Vec<String> {
    let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(sqlx::AssertSqlSafe(format!(
        "EXPLAIN QUERY PLAN {sql}"
    )));
    for _ in 0..binds {
        query = query.bind("x");
    }
    query
        .fetch_all(server.db().pool())
        .await
        .unwrap()
        .into_iter()
        .map(|(_, _, _, detail)| detail)
        .collect()
}

fn assert_no_history_scan(plan: &[String]) {
    for step in plan {
        let scans_messages = step.starts_with("SCAN") && step.contains("task_session_messages")
            || step.starts_with("SCAN m")
            || step.starts_with("SCAN b")
            || step.starts_with("SCAN q");
        assert!(
            !scans_messages
                || step.contains("USING INDEX")
                || step.contains("USING COVERING INDEX"),
            "a full scan of the message history: {step}\n{plan:#?}"
        );
    }
}

#[tokio::test]
async fn the_pending_list_walks_the_open_questions_index() {
    let server = TestServer::start().await;
    for user in [None, Some("someone")] {
        for workspace in [None, Some("ws")] {
            let query = PendingQuery {
                user,
                workspace_id: workspace,
                limit: 50,
                ..PendingQuery::default()
            };
            let steps = plan(&server, &page_sql(Backend::Sqlite, &query), 6).await;
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
        1,
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
