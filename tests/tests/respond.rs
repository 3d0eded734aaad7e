//! The REST lifecycle against a real server and SQLite file: ask, answer,
//! lose to a winner (R2), inactive bundles (409), validation (N*, R2c), R12
//! key presence, and a real concurrent race (R3).

use clarify_server::db::Backend;
use clarify_tests::{Receiver, TestServer, assert_exactly_one_winner, race_answers};
use serde_json::{Value, json};

fn two_questions() -> Value {
    json!([
        {"prompt": "Which database?", "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]},
        {"prompt": "Ship today?", "options": [{"label": "Yes"}, {"label": "No"}]}
    ])
}

fn answer(db: &str, ship: &str) -> Value {
    json!({"answers": [
        {"question_id": "q1", "selected_options": [db]},
        {"question_id": "q2", "selected_options": [ship]}
    ]})
}

#[tokio::test]
async fn r10_winner_then_loser_gets_the_winners_payload() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    // The agent polls (and times out): it stays attached for the grace period,
    // so the answer is delivered live rather than through a resume.
    let (status, _) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504, "A5a: an existing bundle times out with 504");
    let (status, won) = server
        .respond(&pending, &answer("q1_opt1", "q2_opt2"))
        .await;
    assert_eq!(status, 200, "{won}");
    assert_eq!(won["claimed"], true);
    assert_eq!(won["success"], true);
    assert_eq!(won["status"], "answered");

    let (status, lost) = server
        .respond(&pending, &answer("q1_opt2", "q2_opt1"))
        .await;
    assert_eq!(status, 200, "R2 winner branch: {lost}");
    assert_eq!(lost["claimed"], false);
    assert_eq!(
        lost["response"]["answers"], won["response"]["answers"],
        "the loser is told the winner's answers"
    );

    let (status, delivered) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 200, "{delivered}");
    assert_eq!(delivered["response"]["answers"], won["response"]["answers"]);
    server.stop().await;
}

#[tokio::test]
async fn r12_every_key_present_on_the_raw_text() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;

    let text = server
        .client()
        .post(server.url(&format!("/api/v1/clarification/{pending}/respond")))
        .json(&json!({"rejected": true}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for needle in [
        r#""answers":[]"#,
        r#""rejected":true"#,
        r#""reject_reason":"""#,
        r#""claimed":true"#,
        r#""success":true"#,
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn r2_no_winner_branch_superseded_and_terminal_are_409() {
    let server = TestServer::start().await;
    let (task, session, token) = server.session(None).await;
    let old = server.ask(&session, &token, two_questions()).await;
    let (status, _) = server
        .post(&format!("/sessions/{session}/turns"), &json!({}))
        .await;
    assert_eq!(status, 201);
    let (status, body) = server.respond(&old, &answer("q1_opt1", "q2_opt1")).await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (409, "clarification request is no longer active")
    );

    let current = server.ask(&session, &token, two_questions()).await;
    let (_, view) = server.get(&format!("/tasks/{task}")).await;
    assert_eq!(view["task_pending_action"], "clarification");
    let response = server
        .client()
        .patch(server.url(&format!("/api/v1/sessions/{session}")))
        .json(&json!({"state": "COMPLETED"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let (status, _) = server
        .respond(&current, &answer("q1_opt1", "q2_opt1"))
        .await;
    // W3a: a bundle closed without a winner (here expired) is the 409
    // branch, never a winner with a third status.
    assert_eq!(status, 409, "a terminal session's bundle expired");
    let (_, view) = server.get(&format!("/tasks/{task}")).await;
    assert!(
        view.as_object()
            .unwrap()
            .contains_key("task_pending_action"),
        "T2: key always present"
    );
    assert_eq!(view["task_pending_action"], Value::Null);
    assert_eq!(view["primary_session_pending_action"], Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn validation_errors_name_the_field_and_change_nothing() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    let cases = [
        (json!({"answers": [{"question_id": "q1"}]}), "answers"),
        (
            json!({"answers": [{"question_id": "q1", "selected_options": ["nope"]}, {"question_id": "q2"}]}),
            "answers[0].selected_options[0]",
        ),
        (
            json!({"answers": [{"question_id": "q1", "custom_text": "本".repeat(2001)}, {"question_id": "q2"}]}),
            "answers[0].custom_text",
        ),
        (
            json!({"rejected": true, "answers": [{"question_id": "q1"}]}),
            "answers",
        ),
        (json!({"answers": "not a list"}), "answers"),
        (json!({"answer": []}), "answer"),
    ];
    for (body, field) in cases {
        let (status, error) = server.respond(&pending, &body).await;
        assert!((400..500).contains(&status), "{body} → {status}");
        assert!(
            error["error"].as_str().unwrap().contains(field),
            "{body} → {error}"
        );
    }
    for raw in [
        "{not json",
        "[]",
        &format!("{}{}", "[".repeat(200), "]".repeat(200)),
    ] {
        let response = server
            .client()
            .post(server.url(&format!("/api/v1/clarification/{pending}/respond")))
            .header("content-type", "application/json")
            .body(raw.to_owned())
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_client_error(),
            "{raw:.20} → {}",
            response.status()
        );
    }
    let huge = "x".repeat(3 * 1024 * 1024);
    let response = server
        .client()
        .post(server.url(&format!("/api/v1/clarification/{pending}/respond")))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error(), "{}", response.status());

    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "pending", "nothing changed: {view}");
    assert_eq!(view["active"], true);
    server.stop().await;
}

#[tokio::test]
async fn unknown_bundle_is_404_on_all_four_endpoints() {
    let server = TestServer::start().await;
    for (status, body) in [
        server.get("/clarification/nope").await,
        server.get("/clarification/nope/wait?timeout=1").await,
        server
            .post("/clarification/nope/respond", &json!({"rejected": true}))
            .await,
        server.post("/clarification/nope/cancel", &json!({})).await,
    ] {
        assert_eq!(
            (status, body),
            (404, json!({"error": "clarification request not found"}))
        );
    }
    server.stop().await;
}

/// A server, the agent's resume receiver, and two questions that agent asked.
async fn asked_by_a_resumable_agent() -> (TestServer, Receiver, String) {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, token) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    (server, receiver, pending)
}

#[tokio::test]
async fn r3_concurrent_answers_have_exactly_one_winner() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, token) = server.session_resumed_by(&receiver).await;
    for iteration in 0..25 {
        let pending = server.ask(&session, &token, json!([{"prompt": format!("round {iteration}"), "options": [{"label": "a"}, {"label": "b"}]}])).await;
        let results = race_answers(&[&server], &pending, 4).await;
        assert_exactly_one_winner(&results);
        assert_eq!(
            receiver.count(),
            iteration + 1,
            "exactly one resume per bundle"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn detached_answer_resumes_once_and_a_refused_resume_restores() {
    let (server, receiver, pending) = asked_by_a_resumable_agent().await;
    let (status, _) = server
        .respond(&pending, &answer("q1_opt2", "q2_opt1"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(receiver.count(), 1);
    let resume = receiver.last();
    assert_eq!(resume["pending_id"], pending.as_str());
    assert!(
        resume["prompt"]
            .as_str()
            .unwrap()
            .starts_with("You previously asked the user:\nQ1: Which database?"),
        "{resume}"
    );

    // A session whose target refuses: the claim is rolled back (R7a).
    let (_, session, token) = server
        .session(Some(json!({"webhook_url": receiver.refusing_url()})))
        .await;
    let pending = server.ask(&session, &token, two_questions()).await;
    let (status, body) = server
        .respond(&pending, &answer("q1_opt1", "q2_opt1"))
        .await;
    assert_eq!(status, 500, "{body}");
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "pending", "answerable again: {view}");
    assert_eq!(view["active"], true);
    server.stop().await;
}

#[tokio::test]
async fn rejection_of_a_detached_bundle_is_stored_without_resuming() {
    let (server, receiver, pending) = asked_by_a_resumable_agent().await;
    let (status, body) = server
        .respond(
            &pending,
            &json!({"rejected": true, "reject_reason": " busy "}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response"]["reject_reason"], "busy");
    assert_eq!(receiver.count(), 0, "R9: no resume for a rejection");
    let (_, replay) = server
        .respond(
            &pending,
            &json!({"rejected": true, "reject_reason": "other"}),
        )
        .await;
    assert_eq!(replay["claimed"], false);
    assert_eq!(
        replay["response"]["reject_reason"], "",
        "R2b: no reason on replay"
    );
    assert_eq!(replay["response"]["answers"], json!([]));
    server.stop().await;
}

#[tokio::test]
async fn r2c_a_malformed_answer_to_a_resolved_bundle_gets_the_validation_error() {
    let (server, _receiver, pending) = asked_by_a_resumable_agent().await;
    let (status, _) = server
        .respond(&pending, &answer("q1_opt1", "q2_opt1"))
        .await;
    assert_eq!(status, 200);
    let (status, body) = server
        .respond(&pending, &answer("q1_opt1", "no_such_option"))
        .await;
    assert_eq!(status, 400, "not the winner's payload: {body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("answers[1].selected_options[0]")
    );
    server.stop().await;
}

#[tokio::test]
async fn n3a_equivalent_answers_store_byte_identical_payloads() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, token) = server.session_resumed_by(&receiver).await;
    let mut payloads = Vec::new();
    for body in [
        json!({"answers": [
            {"question_id": "q1", "selected_options": ["q1_opt2", "q1_opt1"], "custom_text": " both "},
            {"question_id": "q2", "selected_options": ["q2_opt1"]}]}),
        json!({"answers": [
            {"question_id": "q2", "selected_options": ["q2_opt1", "q2_opt1"], "custom_text": null},
            {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2"], "custom_text": "both\n"}]}),
    ] {
        let pending = server.ask(&session, &token, two_questions()).await;
        server.respond(&pending, &body).await;
        // The replay reads the stored rows back (R2b).
        let (_, replay) = server.respond(&pending, &json!({"rejected": true})).await;
        payloads.push(serde_json::to_string(&replay["response"]["answers"]).unwrap());
    }
    assert_eq!(payloads[0], payloads[1]);
    server.stop().await;
}

#[tokio::test]
async fn r4a_a_failing_claim_is_a_generic_500_and_changes_nothing() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    // A fault inside the database, as a disk or lock failure would be.
    let fault = match server.db().backend() {
        Backend::Sqlite => {
            "CREATE TRIGGER fail_claims BEFORE UPDATE ON task_session_messages \
             BEGIN SELECT RAISE(ABORT, 'secret internal detail'); END"
        }
        Backend::Postgres => {
            "CREATE FUNCTION fail_claim() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'secret internal detail'; END $$; \
             CREATE TRIGGER fail_claims BEFORE UPDATE ON task_session_messages \
             FOR EACH ROW EXECUTE FUNCTION fail_claim()"
        }
    };
    server
        .db()
        .write(async |c| sqlx::raw_sql(fault).execute(c).await)
        .await
        .unwrap();
    let (status, body) = server
        .respond(&pending, &answer("q1_opt1", "q2_opt1"))
        .await;
    assert_eq!(
        (status, body),
        (500, json!({"error": "internal error"})),
        "no internals leak"
    );
    let mend = match server.db().backend() {
        Backend::Sqlite => "DROP TRIGGER fail_claims",
        Backend::Postgres => "DROP TRIGGER fail_claims ON task_session_messages",
    };
    server
        .db()
        .write(async |c| sqlx::query(mend).execute(c).await)
        .await
        .unwrap();
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (&view["status"], &view["active"]),
        (&json!("pending"), &json!(true))
    );
    server.stop().await;
}

#[tokio::test]
async fn l16_a_legacy_bundle_without_question_ids_is_refused_before_the_claim() {
    let server = TestServer::start().await;
    let (task, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    // Plant a legacy row: the same bundle with a question that has no id.
    server
        .edit_metadata(&pending, |m| {
            if m["question_index"] == 1 {
                m.remove("question_id");
            }
        })
        .await;
    for body in [answer("q1_opt1", "q2_opt1"), json!({"rejected": true})] {
        let (status, error) = server.respond(&pending, &body).await;
        assert_eq!(status, 400, "{error}");
        assert!(
            error["error"].as_str().unwrap().contains("question_id"),
            "{error}"
        );
    }
    let (_, view) = server.get(&format!("/tasks/{task}")).await;
    assert_eq!(
        view["task_pending_action"], "clarification",
        "still visible to a human"
    );
    server.stop().await;
}

#[tokio::test]
async fn t1_a_secondary_sessions_question_marks_the_task_not_the_primary() {
    let server = TestServer::start().await;
    let (task, _, _) = server.session(None).await;
    let (status, second) = server
        .post(&format!("/tasks/{task}/sessions"), &json!({}))
        .await;
    assert_eq!(status, 201);
    let session = second["id"].as_str().unwrap();
    let token = second["agent_token"].as_str().unwrap();
    server.ask(session, token, two_questions()).await;
    let (_, view) = server.get(&format!("/tasks/{task}")).await;
    assert_eq!(view["task_pending_action"], "clarification");
    assert_eq!(view["primary_session_pending_action"], Value::Null);
    let (_, list) = server.get("/tasks").await;
    assert_eq!(list["tasks"][0]["task_pending_action"], "clarification");
    server.stop().await;
}

#[tokio::test]
async fn m5_a_bundle_without_task_id_resolves_it_from_its_session() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (task, session, token) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    server
        .write_sql(
            "UPDATE task_session_messages SET task_id = '' WHERE pending_id = $1",
            &pending,
        )
        .await;
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["task_id"], task.as_str());
    let (status, _) = server
        .respond(&pending, &answer("q1_opt1", "q2_opt1"))
        .await;
    assert_eq!(status, 200, "still answerable");
    server.stop().await;
}

#[tokio::test]
async fn r2_a_losing_answer_does_not_touch_the_transcript() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, token) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    server
        .respond(&pending, &answer("q1_opt1", "q2_opt1"))
        .await;
    let (_, before) = server.get(&format!("/sessions/{session}/messages")).await;
    let (_, lost) = server
        .respond(&pending, &answer("q1_opt2", "q2_opt2"))
        .await;
    assert_eq!(lost["claimed"], false);
    let (_, after) = server.get(&format!("/sessions/{session}/messages")).await;
    assert_eq!(before, after, "no overwrite, not even updated_at");
    assert_eq!(receiver.count(), 1, "no second resume");
    server.stop().await;
}

#[tokio::test]
async fn a_nul_character_is_a_clear_400_naming_the_field_on_either_backend() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/tasks", &json!({"title": "ok", "description": "a\u{0}b"}))
        .await;
    assert_eq!(
        (status, &body),
        (
            400,
            &json!({"error": "description: may not contain the NUL character (U+0000)"})
        )
    );
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    let (status, body) = server
        .respond(
            &pending,
            &json!({"answers": [
            {"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "x\u{0}"},
            {"question_id": "q2", "selected_options": ["q2_opt1"]}]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("answers[0].custom_text: may not contain the NUL"),
        "{body}"
    );
    // In a value the server ignores too, deep down: the document says so
    // in words (openapi/nul.rs), so a test says it here.
    let (status, body) = server
        .as_token(&token)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": [{"prompt": "Which?", "options": [
                {"label": "a", "extra": {"deep": [["\u{0}"]]}}, {"label": "b"}]}]}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("NUL"), "{body}");
    // A NUL smuggled into the path is a 4xx too, never an internal error.
    let (status, body) = server.get("/clarification/a%00b").await;
    assert!(matches!(status, 400 | 404), "{status} {body}");
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "pending", "nothing changed");
    server.stop().await;
}

#[tokio::test]
async fn n1_reason_and_reject_reason_are_one_field_over_rest_as_over_mcp() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, two_questions()).await;
    let both = json!({"rejected": true, "reason": "a", "reject_reason": "b"});
    let (status, body) = server.respond(&pending, &both).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("reason:"),
        "{body}"
    );
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["active"], true, "nothing changed");

    let (status, body) = server
        .respond(&pending, &json!({"rejected": true, "reason": "later"}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["response"]["reject_reason"], "later");
    server.stop().await;
}
