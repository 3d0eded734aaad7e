//! After the claim, every path ends "delivered exactly once" or "answerable
//! again" — never both, never neither (issue 13). Each test makes one
//! database step after the claim fail for real, with a trigger (as a full
//! disk or a lock error would), on SQLite and on PostgreSQL alike, then
//! lifts the fault and checks where the bundle ended.

use std::time::Duration;

use clarify_server::Config;
use clarify_server::db::Backend;
use clarify_tests::{Receiver, TestServer};
use serde_json::{Value, json};

/// How long the sweep may take to mend what a fault left behind.
const PROMPTLY: Duration = Duration::from_secs(10);

fn question() -> Value {
    json!([{"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}])
}

fn pick() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
}

/// A server whose sweep runs every 50 ms and takes claims untouched for
/// 300 ms for abandoned.
async fn server() -> TestServer {
    TestServer::start_with(Config {
        sweep_interval: Some(Duration::from_millis(50)),
        orphan_after: Some(Duration::from_millis(300)),
        ..Config::default()
    })
    .await
}

/// Where a fault strikes: a table, the statement, and the rows (a condition
/// on OLD/NEW, written once for each backend).
struct Fault {
    table: &'static str,
    event: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

/// A claimed row's delivery being made final (answered or rejected kept,
/// no longer pending delivery).
const FINALIZE: Fault = Fault {
    table: "task_session_messages",
    event: "UPDATE",
    sqlite: "json_extract(OLD.metadata, '$.response_delivery_pending') = 1 \
             AND json_extract(NEW.metadata, '$.response_delivery_pending') IS NULL \
             AND json_extract(NEW.metadata, '$.status') IN ('answered', 'rejected')",
    postgres: "(OLD.metadata::jsonb ->> 'response_delivery_pending') = 'true' \
               AND (NEW.metadata::jsonb ->> 'response_delivery_pending') IS NULL \
               AND (NEW.metadata::jsonb ->> 'status') IN ('answered', 'rejected')",
};

/// A live answer's claimed row made final in the claim's own transaction
/// (the agent blocked on it: claim, delivery and session state are one
/// write): from `responding`, or straight from open when the claim's one
/// UPDATE writes the row's final state itself (issue 50).
const LIVE_FINAL: Fault = Fault {
    table: "task_session_messages",
    event: "UPDATE",
    sqlite: "COALESCE(json_extract(OLD.metadata, '$.status'), '') \
                 IN ('', 'pending', 'responding') \
             AND json_extract(NEW.metadata, '$.response_delivery_pending') IS NULL \
             AND json_extract(NEW.metadata, '$.status') IN ('answered', 'rejected')",
    postgres: "COALESCE(OLD.metadata::jsonb ->> 'status', '') \
                   IN ('', 'pending', 'responding') \
               AND (NEW.metadata::jsonb ->> 'response_delivery_pending') IS NULL \
               AND (NEW.metadata::jsonb ->> 'status') IN ('answered', 'rejected')",
};

/// Any rewrite of a claimed row: finalize, marks, and the rollback too.
const EVERY_CLAIMED_WRITE: Fault = Fault {
    table: "task_session_messages",
    event: "UPDATE",
    sqlite: "json_extract(OLD.metadata, '$.response_delivery_pending') = 1",
    postgres: "(OLD.metadata::jsonb ->> 'response_delivery_pending') = 'true'",
};

const MARK_RESUME: Fault = Fault {
    table: "task_session_messages",
    event: "UPDATE",
    sqlite: "json_extract(NEW.metadata, '$.resume_attempted') = 1 \
             AND json_extract(OLD.metadata, '$.resume_attempted') IS NULL",
    postgres: "(NEW.metadata::jsonb ->> 'resume_attempted') = 'true' \
               AND (OLD.metadata::jsonb ->> 'resume_attempted') IS NULL",
};

const MARK_PICKUP: Fault = Fault {
    table: "task_session_messages",
    event: "UPDATE",
    sqlite: "json_extract(NEW.metadata, '$.awaiting_pickup') = 1 \
             AND json_extract(OLD.metadata, '$.awaiting_pickup') IS NULL",
    postgres: "(NEW.metadata::jsonb ->> 'awaiting_pickup') = 'true' \
               AND (OLD.metadata::jsonb ->> 'awaiting_pickup') IS NULL",
};

/// The successor turn a resume starts.
const START_TURN: Fault = Fault {
    table: "task_session_turns",
    event: "INSERT",
    sqlite: "1",
    postgres: "true",
};

/// The session leaving WAITING_FOR_INPUT once its question is answered.
const SESSION_RUNNING: Fault = Fault {
    table: "task_sessions",
    event: "UPDATE",
    sqlite: "OLD.state = 'WAITING_FOR_INPUT' AND NEW.state = 'RUNNING'",
    postgres: "OLD.state = 'WAITING_FOR_INPUT' AND NEW.state = 'RUNNING'",
};

async fn inject(server: &TestServer, fault: &Fault) {
    let Fault {
        table,
        event,
        sqlite,
        postgres,
    } = fault;
    let sql = match server.db().backend() {
        Backend::Sqlite => format!(
            "CREATE TRIGGER injected_fault BEFORE {event} ON {table} WHEN {sqlite} \
             BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
        ),
        Backend::Postgres => format!(
            "CREATE OR REPLACE FUNCTION injected_fault() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$; \
             CREATE TRIGGER injected_fault BEFORE {event} ON {table} \
             FOR EACH ROW WHEN ({postgres}) EXECUTE FUNCTION injected_fault()"
        ),
    };
    server
        .db()
        .write(async |c| sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(c).await)
        .await
        .unwrap();
}

async fn mend(server: &TestServer, fault: &Fault) {
    let sql = match server.db().backend() {
        Backend::Sqlite => "DROP TRIGGER injected_fault".to_owned(),
        Backend::Postgres => format!("DROP TRIGGER injected_fault ON {}", fault.table),
    };
    server
        .db()
        .write(async |c| sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(c).await)
        .await
        .unwrap();
}

/// The bundle as a reader sees it.
async fn view(server: &TestServer, pending: &str) -> Value {
    let (status, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(status, 200, "{view}");
    view
}

/// Whether any of the bundle's rows is still claimed and undelivered.
async fn delivery_pending(server: &TestServer, pending: &str) -> bool {
    let rows: Vec<(i64,)> = sqlx::query_as(
        "SELECT COUNT(*) FROM task_session_messages \
         WHERE pending_id = $1 AND clarification_delivery_pending = 1",
    )
    .bind(pending)
    .fetch_all(server.db().pool())
    .await
    .unwrap();
    rows[0].0 > 0
}

/// Waits until the sweep has settled the bundle (nothing left mid-delivery).
async fn settled(server: &TestServer, pending: &str) {
    tokio::time::timeout(PROMPTLY, async {
        while delivery_pending(server, pending).await {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the sweep settled the claim");
}

/// Answerable again: active, pending, and a second answer wins.
async fn assert_answerable_again(server: &TestServer, pending: &str) {
    let seen = view(server, pending).await;
    assert_eq!(
        (&seen["status"], &seen["active"]),
        (&json!("pending"), &json!(true)),
        "{seen}"
    );
    let (status, again) = server.respond(pending, &pick()).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["claimed"], true, "{again}");
}

/// Delivered, and not answerable any more.
async fn assert_delivered(server: &TestServer, pending: &str) {
    let seen = view(server, pending).await;
    assert_eq!(
        (&seen["status"], &seen["active"]),
        (&json!("answered"), &json!(false)),
        "{seen}"
    );
    let (status, late) = server.respond(pending, &pick()).await;
    assert_eq!((status, &late["claimed"]), (200, &json!(false)), "{late}");
}

/// A question whose session resumes its agent through `receiver`.
async fn resumable(server: &TestServer, receiver: &Receiver) -> String {
    let (_, session, agent) = server.session_resumed_by(receiver).await;
    server.ask(&session, &agent, question()).await
}

/// The agent blocked on the question: whatever write of the one
/// transaction fails (the row made final, the session back to RUNNING),
/// nothing was claimed, the waiter keeps waiting, and the next answer
/// reaches it.
#[tokio::test]
async fn a_live_answer_that_cannot_be_written_leaves_the_question_open_and_its_waiter_waiting() {
    for fault in [&LIVE_FINAL, &SESSION_RUNNING] {
        let server = server().await;
        let (_, session, agent) = server.session(None).await;
        let pending = server.ask(&session, &agent, question()).await;
        let wait = format!("/clarification/{pending}/wait?timeout=30");
        let waiter = server.as_token(&agent);
        let answering = async {
            // Attached first: a finished poll keeps the agent attached.
            let (status, _) = waiter
                .get(&format!("/clarification/{pending}/wait?timeout=0"))
                .await;
            assert_eq!(status, 504);
            inject(&server, fault).await;
            let (status, body) = server.respond(&pending, &pick()).await;
            assert_eq!(status, 500, "{body}");
            assert!(
                !delivery_pending(&server, &pending).await,
                "nothing claimed"
            );
            mend(&server, fault).await;
            assert_answerable_again(&server, &pending).await;
        };
        let ((status, delivered), ()) = tokio::join!(waiter.get(&wait), answering);
        assert_eq!(status, 200, "the waiter got the second answer: {delivered}");
        assert_delivered(&server, &pending).await;
        server.stop().await;
    }
}

#[tokio::test]
async fn a_resume_that_cannot_be_marked_is_reopened_and_never_sent() {
    let server = server().await;
    let receiver = Receiver::start().await;
    let pending = resumable(&server, &receiver).await;
    inject(&server, &MARK_RESUME).await;
    let (status, body) = server.respond(&pending, &pick()).await;
    assert_eq!(status, 500, "{body}");
    mend(&server, &MARK_RESUME).await;
    assert_eq!(receiver.count(), 0, "no resume was sent");
    assert_answerable_again(&server, &pending).await;
    assert_eq!(receiver.count(), 1, "the second answer resumed the agent");
    server.stop().await;
}

#[tokio::test]
async fn a_resume_sent_is_never_reported_as_a_failure_whatever_fails_after_it() {
    for fault in [&START_TURN, &FINALIZE] {
        let server = server().await;
        let receiver = Receiver::start().await;
        let pending = resumable(&server, &receiver).await;
        inject(&server, fault).await;
        let (status, body) = server.respond(&pending, &pick()).await;
        assert_eq!(status, 200, "the agent was resumed: {body}");
        assert_eq!(body["claimed"], true);
        mend(&server, fault).await;
        // A claim whose resume was attempted is kept by the sweep, never
        // reopened: the agent was resumed once and only once.
        settled(&server, &pending).await;
        assert_eq!(receiver.count(), 1);
        assert_delivered(&server, &pending).await;
        assert_eq!(receiver.count(), 1, "no second resume");
        server.stop().await;
    }
}

#[tokio::test]
async fn an_answer_that_cannot_be_kept_for_pickup_is_reopened() {
    let server = server().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    inject(&server, &MARK_PICKUP).await;
    let (status, body) = server.respond(&pending, &pick()).await;
    assert_eq!(status, 500, "{body}");
    mend(&server, &MARK_PICKUP).await;
    assert_answerable_again(&server, &pending).await;
    assert_eq!(view(&server, &pending).await["awaiting_pickup"], true);
    server.stop().await;
}

#[tokio::test]
async fn a_delivered_answer_stands_when_the_session_state_cannot_be_updated() {
    let server = server().await;
    let receiver = Receiver::start().await;
    let pending = resumable(&server, &receiver).await;
    inject(&server, &SESSION_RUNNING).await;
    let (status, body) = server.respond(&pending, &pick()).await;
    assert_eq!(status, 200, "delivered: {body}");
    mend(&server, &SESSION_RUNNING).await;
    assert_eq!(receiver.count(), 1);
    assert_delivered(&server, &pending).await;
    server.stop().await;
}

#[tokio::test]
async fn when_the_delivery_and_its_rollback_both_fail_the_sweep_reopens_the_question() {
    let server = server().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    // Nobody waits and no target: the answer is to be kept for pickup. That
    // write fails, and so does the rollback, as on a disk that refuses
    // every write after the claim.
    inject(&server, &EVERY_CLAIMED_WRITE).await;
    let (status, body) = server.respond(&pending, &pick()).await;
    assert_eq!((status, body), (500, json!({"error": "internal error"})));
    assert!(
        delivery_pending(&server, &pending).await,
        "stuck mid-delivery"
    );
    mend(&server, &EVERY_CLAIMED_WRITE).await;
    settled(&server, &pending).await;
    assert_answerable_again(&server, &pending).await;
    server.stop().await;
}
