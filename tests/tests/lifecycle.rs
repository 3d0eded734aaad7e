//! The rest of the lifecycle: asking (A6, idempotent repeat), turns (detach,
//! supersede), cancel (A9), waiting (A5a), live events, and P1 on a
//! migrated database (the structural P1 check is in `architecture.rs`).

use clarify_tests::{Receiver, TestServer};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

fn one_question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no"}]}])
}

#[tokio::test]
async fn an_identical_repeated_request_returns_the_same_bundle() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let first = server.ask(&session, &token, one_question("Deploy?")).await;
    let again = server.ask(&session, &token, one_question("Deploy?")).await;
    assert_eq!(first, again);
    let other = server
        .ask(&session, &token, one_question("Roll back?"))
        .await;
    assert_ne!(first, other);
    let (_, transcript) = server.get(&format!("/sessions/{session}/messages")).await;
    assert_eq!(
        transcript["messages"].as_array().unwrap().len(),
        2,
        "{transcript}"
    );
    server.stop().await;
}

#[tokio::test]
async fn asking_needs_the_sessions_own_agent_token() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let (_, other_session, other_token) = server.session(None).await;
    let body = json!({"session_id": session, "questions": one_question("?")});
    let ask = |token: Option<String>| {
        let mut request = server
            .client()
            .post(server.url("/api/v1/clarification/request"))
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(ask(None).await.unwrap().status(), 401);
    assert_eq!(
        ask(Some("clk_agent_forged".into())).await.unwrap().status(),
        401
    );
    assert_eq!(ask(Some(other_token)).await.unwrap().status(), 403);
    assert_eq!(ask(Some(token.clone())).await.unwrap().status(), 201);
    let _ = other_session;

    let bad = json!({"session_id": session, "questions": [{"prompt": "?", "options": [{"label": "only one"}]}]});
    let response = server
        .client()
        .post(server.url("/api/v1/clarification/request"))
        .bearer_auth(&token)
        .json(&bad)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .starts_with("questions[0].options:"),
        "{error}"
    );
    server.stop().await;
}

#[tokio::test]
async fn completing_the_turn_detaches_and_the_answer_resumes_the_agent() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, token) = server.session_resumed_by(&receiver).await;
    let (_, turn) = server
        .post(&format!("/sessions/{session}/turns"), &json!({}))
        .await;
    let pending = server
        .ask(&session, &token, one_question("Keep going?"))
        .await;
    let turn_id = turn["id"].as_str().unwrap();
    let (status, _) = server
        .post(
            &format!("/sessions/{session}/turns/{turn_id}/complete"),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200);

    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (&view["agent_disconnected"], &view["active"]),
        (&json!(true), &json!(true)),
        "detached, still answerable: {view}"
    );
    let (status, body) = server
        .respond(
            &pending,
            &json!({"answers": [{"question_id": "q1", "custom_text": "yes, go"}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let resume = receiver.last();
    assert_eq!(
        resume["prompt"],
        "You previously asked the user: \"Keep going?\"\nUser answered: yes, go\nPlease continue with this information."
    );
    assert_eq!(resume["response"]["answers"][0]["custom_text"], "yes, go");
    server.stop().await;
}

#[tokio::test]
async fn cancel_closes_the_bundle_for_waiters_and_answerers() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, one_question("Wait?")).await;
    let waiter = {
        let url = server.url(&format!("/api/v1/clarification/{pending}/wait?timeout=60"));
        let client = server.client().clone();
        tokio::spawn(async move { client.get(url).send().await.unwrap().status().as_u16() })
    };
    let (status, body) = server
        .post(&format!("/clarification/{pending}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (status, body),
        (200, json!({"success": true, "status": "cancelled"}))
    );
    // Whether the waiter registered before or after the cancel, it ends now.
    assert_eq!(waiter.await.unwrap(), 409);
    let (status, _) = server.respond(&pending, &json!({"rejected": true})).await;
    assert_eq!(status, 409, "cancelled, no winner");
    let (status, _) = server
        .post(&format!("/clarification/{pending}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 409);
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "cancelled");
    server.stop().await;
}

#[tokio::test]
async fn a_blocked_waiter_receives_the_answer_with_its_reason() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, one_question("Merge?")).await;
    // Attach first (a timed-out poll keeps the agent attached for the grace
    // period), then block on a long poll while the human answers.
    let (status, _) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504);
    let waiter = {
        let url = server.url(&format!("/api/v1/clarification/{pending}/wait?timeout=60"));
        let client = server.client().clone();
        tokio::spawn(async move {
            client
                .get(url)
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    let (status, _) = server
        .respond(
            &pending,
            &json!({"rejected": true, "reject_reason": "not today"}),
        )
        .await;
    assert_eq!(status, 200);
    let delivered = waiter.await.unwrap();
    assert_eq!(delivered["status"], "rejected", "{delivered}");
    assert!(delivered["response"]["rejected"] == true);
    server.stop().await;
}

#[tokio::test]
async fn events_announce_questions_and_answers_but_not_a_losing_answer() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let ws_url = server.url("/api/v1/ws").replace("http://", "ws://");
    let (mut socket, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
    let mut next = async || loop {
        match socket.next().await.expect("socket open").expect("frame") {
            Message::Text(text) => return serde_json::from_str::<Value>(&text).unwrap(),
            _ => continue,
        }
    };

    let pending = server.ask(&session, &token, one_question("Ship?")).await;
    let added = next().await;
    assert_eq!(
        (added["type"].as_str(), added["action"].as_str()),
        (Some("notification"), Some("session.message.added"))
    );
    assert_eq!(added["payload"]["metadata"]["pending_id"], pending.as_str());
    assert_eq!(added["payload"]["pending_action"], "clarification");
    assert_eq!(next().await["action"], "task.updated");

    let (_, _) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    server
        .respond(
            &pending,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
        )
        .await;
    let updated = next().await;
    assert_eq!(updated["action"], "session.message.updated");
    assert_eq!(updated["payload"]["metadata"]["status"], "answered");
    assert_eq!(updated["payload"]["pending_action"], Value::Null);
    assert_eq!(next().await["action"], "task.updated");

    // The loser changes nothing and publishes nothing (R2): the next event
    // on the socket is the one caused after it.
    let (_, lost) = server.respond(&pending, &json!({"rejected": true})).await;
    assert_eq!(lost["claimed"], false);
    let marker = server.ask(&session, &token, one_question("Marker?")).await;
    let after = next().await;
    assert_eq!(after["action"], "session.message.added");
    assert_eq!(after["payload"]["metadata"]["pending_id"], marker.as_str());
    server.stop().await;
}

#[tokio::test]
async fn p1_no_resolution_table_exists_in_a_migrated_database() {
    let database = clarify_tests::TestDatabase::create().await;
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    let tables = clarify_server::db::table_names(&db).await.unwrap();
    let names: Vec<&str> = tables.iter().map(String::as_str).collect();
    assert!(names.contains(&"task_session_messages"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("resolution")), "{names:?}");
}

#[tokio::test]
async fn a_tasks_sessions_are_listed_primary_first_with_their_pending_action() {
    let server = TestServer::start().await;
    let (task, primary, _) = server.session(None).await;
    let (_, second) = server
        .post(&format!("/tasks/{task}/sessions"), &json!({}))
        .await;
    let second_id = second["id"].as_str().unwrap();
    server
        .ask(
            second_id,
            second["agent_token"].as_str().unwrap(),
            one_question("Which?"),
        )
        .await;
    let (status, list) = server.get(&format!("/tasks/{task}/sessions")).await;
    assert_eq!(status, 200);
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions[0]["id"], primary.as_str());
    assert_eq!(sessions[0]["pending_action"], Value::Null);
    assert_eq!(sessions[1]["pending_action"], "clarification");
    assert!(
        sessions.iter().all(|s| s.get("agent_token").is_none()),
        "tokens are shown once only"
    );
    assert_eq!(server.get("/tasks/nope/sessions").await.0, 404);
    server.stop().await;
}

#[tokio::test]
async fn r6_a_claim_taken_back_by_reconciliation_is_fenced_off_from_its_delivery() {
    use clarify_server::db::clarification::{self as repo, Guard};
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let pending = server.ask(&session, &token, one_question("Fenced?")).await;
    let db = server.db();
    let outcome = clarify_core::Outcome::Rejected {
        reason: String::new(),
    };
    let now = clarify_server::clock::now_micros();
    let by = clarify_core::AnsweredBy::new("anonymous", clarify_core::Channel::Rest, "");

    // Read once: the second claim below finds the rows changed since
    // (restored), so it writes them from what its lock reads (issue 50).
    let read = repo::load(db.pool(), &pending).await.unwrap().unwrap();
    let claiming = |now| repo::Claiming {
        outcome: &outcome,
        by: &by,
        now,
        delivery: repo::Delivery::Pending,
        read: &read,
    };

    // A replica claims, then stalls; another takes the claim for abandoned.
    let stalled = repo::complete_active_bundle(db, &pending, claiming(now))
        .await
        .unwrap()
        .expect("won");
    let later = now + 1_000_000;
    assert!(
        repo::restore(db, &pending, later, Guard::UntouchedBefore(later))
            .await
            .unwrap()
    );
    // A claim taken back takes its provenance with it.
    let restored = repo::load(db.pool(), &pending).await.unwrap().unwrap();
    assert!(
        restored
            .messages
            .iter()
            .all(|m| m.metadata.answered_by.is_none())
    );
    // Someone answers again and is delivering.
    let current = repo::complete_active_bundle(db, &pending, claiming(later + 1))
        .await
        .unwrap()
        .expect("answerable again");

    // The stalled delivery wakes up: none of its writes touches the new claim.
    let stale = Guard::Claim(stalled.token);
    assert!(
        !repo::mark(
            db,
            &pending,
            later + 2,
            stalled.token,
            repo::Mark::ResumeAttempted
        )
        .await
        .unwrap()
    );
    assert!(
        !repo::finalize(db, &pending, later + 2, stale)
            .await
            .unwrap()
    );
    assert!(!repo::restore(db, &pending, later + 2, stale).await.unwrap());
    let rows = repo::load(db.pool(), &pending).await.unwrap().unwrap();
    assert!(
        rows.messages
            .iter()
            .all(|m| m.metadata.response_delivery_pending)
    );

    // The current one completes.
    assert!(
        repo::finalize(db, &pending, later + 3, Guard::Claim(current.token))
            .await
            .unwrap()
    );
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (&view["status"], &view["active"]),
        (&json!("rejected"), &json!(false))
    );
    server.stop().await;
}

#[tokio::test]
async fn t1_one_pending_action_for_tasks_session_lists_and_events() {
    let server = TestServer::start().await;
    let (task, session, token) = server.session(None).await;
    let first = server.ask(&session, &token, one_question("First?")).await;
    let second = server.ask(&session, &token, one_question("Second?")).await;
    let pending_action = async || {
        let (_, view) = server.get(&format!("/tasks/{task}")).await;
        let (_, list) = server.get(&format!("/tasks/{task}/sessions")).await;
        (
            view["task_pending_action"].clone(),
            view["primary_session_pending_action"].clone(),
            list["sessions"][0]["pending_action"].clone(),
        )
    };
    let waiting = json!("clarification");
    assert_eq!(
        pending_action().await,
        (waiting.clone(), waiting.clone(), waiting)
    );

    // IDLE: not input-capable (T1), though its bundles stay active (D4).
    let (status, _) = server
        .api()
        .patch(&format!("/sessions/{session}"), &json!({"state": "IDLE"}))
        .await;
    assert_eq!(status, 200);
    let (_, view) = server.get(&format!("/clarification/{second}")).await;
    assert_eq!(view["active"], true, "{view}");
    assert_eq!(
        pending_action().await,
        (Value::Null, Value::Null, Value::Null)
    );

    // A message event says the same.
    let ws_url = server.url("/api/v1/ws").replace("http://", "ws://");
    let (mut socket, _) = tokio_tungstenite::connect_async(ws_url).await.unwrap();
    let (status, _) = server
        .post(&format!("/clarification/{first}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200);
    let updated = clarify_tests::next_event(&mut socket, "session.message.updated").await;
    assert_eq!(updated["payload"]["metadata"]["pending_id"], first.as_str());
    assert_eq!(
        updated["payload"]["pending_action"],
        Value::Null,
        "{updated}"
    );
    server.stop().await;
}

#[tokio::test]
async fn every_terminal_state_expires_the_sessions_questions_durably_and_says_so() {
    let server = TestServer::start().await;
    let mut browser = server.events().await;
    for state in ["COMPLETED", "FAILED", "CANCELLED"] {
        let (_, session, token) = server.session(None).await;
        let pending = server.ask(&session, &token, one_question(state)).await;
        let (status, _) = server
            .api()
            .patch(&format!("/sessions/{session}"), &json!({"state": state}))
            .await;
        assert_eq!(status, 200);
        let (_, view) = server.get(&format!("/clarification/{pending}")).await;
        assert_eq!(
            (&view["status"], &view["active"]),
            (&json!("expired"), &json!(false)),
            "{state}: {view}"
        );
        let (_, transcript) = server.get(&format!("/sessions/{session}/messages")).await;
        let stored = &transcript["messages"][0]["metadata"]["status"];
        assert_eq!(
            stored, "expired",
            "{state}: the row itself, not only the view"
        );
        let updated = loop {
            let event = clarify_tests::next_event(&mut browser, "session.message.updated").await;
            if event["payload"]["metadata"]["pending_id"] == pending.as_str() {
                break event;
            }
        };
        assert_eq!(
            updated["payload"]["metadata"]["status"], "expired",
            "{state}"
        );
    }
    server.stop().await;
}

/// Issue 17: an answer to a blocked agent announces its rows from what the
/// claim wrote, without reading them back; the event must carry exactly
/// what a read of the transcript returns.
#[tokio::test]
async fn a_live_answers_event_carries_the_rows_as_stored() {
    let server = TestServer::start().await;
    let (_, session, token) = server.session(None).await;
    let questions = json!([
        {"prompt": "Merge?", "options": [{"label": "yes"}, {"label": "no"}]},
        {"prompt": "When?", "options": [{"label": "now"}, {"label": "later"}]}
    ]);
    let pending = server.ask(&session, &token, questions).await;
    let mut events = server.events().await;
    // Attached for the grace period after a poll that timed out.
    let (status, _) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504);
    let answer = json!({"answers": [
        {"question_id": "q1", "selected_options": ["q1_opt1"]},
        {"question_id": "q2", "selected_options": [], "custom_text": "after lunch"}
    ]});
    let (status, body) = server.respond(&pending, &answer).await;
    assert_eq!((status, &body["claimed"]), (200, &json!(true)), "{body}");
    let mut announced = Vec::new();
    let collect = async {
        while announced.len() < 2 {
            let event = clarify_tests::next_event(&mut events, "session.message.updated").await;
            let mut message = event["payload"].clone();
            if message["metadata"]["pending_id"] == pending.as_str() {
                // The event's own key; the rest is the message.
                message.as_object_mut().unwrap().remove("pending_action");
                announced.push(message);
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), collect)
        .await
        .expect("both rows announced");
    let (_, transcript) = server.get(&format!("/sessions/{session}/messages")).await;
    let stored: Vec<Value> = transcript["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["metadata"]["pending_id"] == pending.as_str())
        .cloned()
        .collect();
    assert_eq!(announced, stored);
    assert_eq!(stored[0]["metadata"]["status"], "answered");
    server.stop().await;
}
