//! Every answer reaches its agent (issue 13). Pull delivery: an answer
//! that finds no agent attached and no resume target is accepted and kept
//! until the agent's next wait, identical ask, or read collects it — across
//! a restart, and never by anyone else's read.

use clarify_server::Config;
use clarify_tests::{TestServer, mcp};
use serde_json::{Value, json};

fn question() -> Value {
    json!([{"prompt": "Ship it?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

fn yes() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "go"}]})
}

/// A polling agent's question (no resume target, nobody waiting), answered.
async fn answered_while_away(server: &TestServer) -> (String, String, Value) {
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, won) = server.respond(&pending, &yes()).await;
    assert_eq!(status, 200, "accepted, not an error: {won}");
    assert_eq!(won["claimed"], true);
    (pending, agent, won)
}

async fn view(server: &TestServer, pending: &str) -> Value {
    let (status, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(status, 200, "{view}");
    view
}

#[tokio::test]
async fn an_answer_given_between_two_polls_is_kept_and_the_next_poll_collects_it() {
    let server = TestServer::start().await;
    let (pending, agent, won) = answered_while_away(&server).await;
    let kept = view(&server, &pending).await;
    assert_eq!(
        (&kept["status"], &kept["awaiting_pickup"]),
        (&json!("answered"), &json!(true))
    );
    assert_eq!(kept["active"], false, "nobody else can answer it");

    let (status, collected) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=5"))
        .await;
    assert_eq!(status, 200, "{collected}");
    assert_eq!(collected["response"]["answers"], won["response"]["answers"]);
    assert_eq!(
        view(&server, &pending).await["awaiting_pickup"],
        false,
        "delivered now"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_kept_answer_survives_a_restart_and_the_identical_ask_collects_it() {
    let first = TestServer::start().await;
    let (_, session, agent) = first.session(None).await;
    let pending = first.ask(&session, &agent, question()).await;
    let (status, won) = first.respond(&pending, &yes()).await;
    assert_eq!(status, 200, "{won}");
    // A restart reconciles interrupted deliveries; a kept answer is not one.
    let second = first.replica_with(Config::default()).await;
    first.stop().await;
    assert_eq!(view(&second, &pending).await["awaiting_pickup"], true);

    // The agent, restarted too, asks the same question again.
    let again = second.ask(&session, &agent, question()).await;
    assert_eq!(again, pending, "the identical ask finds the kept answer");
    let (status, collected) = second
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=5"))
        .await;
    assert_eq!(status, 200, "{collected}");
    assert_eq!(collected["response"]["answers"], won["response"]["answers"]);
    second.stop().await;
}

#[tokio::test]
async fn the_agents_own_read_collects_and_nobody_elses_does() {
    let server = TestServer::start_with(Config {
        auth: true,
        ..Config::default()
    })
    .await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (_, session, agent) = server.as_token(&alice).session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let (status, _) = server.as_token(&alice).respond(&pending, &yes()).await;
    assert_eq!(status, 200);

    // Bob may see the task (no workspace) and read the outcome: not collect.
    let bob = server.as_token(&bob);
    let (status, seen) = bob
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(
        (status, &seen["status"]),
        (200, &json!("answered")),
        "{seen}"
    );
    let (_, read) = bob.get(&format!("/clarification/{pending}")).await;
    assert_eq!(read["awaiting_pickup"], true, "still kept for the agent");

    let (_, read) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}"))
        .await;
    assert_eq!(read["status"], "answered");
    assert_eq!(
        read["awaiting_pickup"], false,
        "the agent's read collected it"
    );
    assert_eq!(read["response"]["answers"][0]["custom_text"], "go");
    server.stop().await;
}

/// With auth off the identity layer still knows an agent by its token
/// (issue 27, item 3): another session's agent is an observer and leaves
/// the kept answer to the asking agent. A tokenless wait is the local user,
/// the asking agent as far as anyone can tell (A4, DESIGN.md "delivery";
/// issue 45 item 2), and collects it.
#[tokio::test]
async fn without_auth_another_agent_observes_a_kept_answer_and_a_tokenless_wait_collects_it() {
    let server = TestServer::start().await;
    let (pending, _, won) = answered_while_away(&server).await;
    let (_, _, other_agent) = server.session(None).await;
    let path = format!("/clarification/{pending}/wait?timeout=1");
    let (status, seen) = server.as_token(&other_agent).get(&path).await;
    assert_eq!(
        (status, &seen["status"]),
        (200, &json!("answered")),
        "{seen}"
    );
    assert_eq!(
        view(&server, &pending).await["awaiting_pickup"],
        true,
        "another session's agent only observed"
    );
    let (status, collected) = server.get(&path).await;
    assert_eq!(status, 200, "{collected}");
    assert_eq!(collected["response"]["answers"], won["response"]["answers"]);
    assert_eq!(view(&server, &pending).await["awaiting_pickup"], false);
    server.stop().await;
}

#[tokio::test]
async fn an_mcp_agent_asking_again_receives_the_answer_kept_for_it() {
    let server = TestServer::start().await;
    let (pending, agent, _) = answered_while_away(&server).await;
    let client = mcp::connect(&server, "/mcp/agent", Some(&agent)).await;
    let asked = mcp::call(
        &client,
        "ask_user_question_kandev",
        &json!({"questions": question()}),
    )
    .await;
    let out = mcp::ok(&asked);
    assert_eq!(out["pending_id"], pending.as_str());
    assert_eq!(out["answers"]["q1"]["selected_options"], json!(["q1_opt1"]));
    assert_eq!(out["answers"]["q1"]["custom_text"], "go");
    assert_eq!(view(&server, &pending).await["awaiting_pickup"], false);
    client.cancel().await.unwrap();
    server.stop().await;
}

/// Issue 45 item 2 (the reviewer's reproduction): with auth off, a session
/// with a resume webhook asks; a tokenless `/wait` blocks on it; an answer
/// arrives. The wait got the answer and the webhook was POSTed it too:
/// delivered twice. The tokenless caller is the asking agent (DESIGN.md
/// "delivery", A4): it takes the delivery and nobody is resumed. Another
/// session's agent token still only observes.
#[tokio::test]
async fn without_auth_a_tokenless_wait_takes_the_delivery_and_nobody_is_resumed() {
    let receiver = clarify_tests::Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, question()).await;

    let waiter = {
        let url = server.url(&format!("/api/v1/clarification/{pending}/wait?timeout=30"));
        let client = server.client().clone();
        tokio::spawn(async move {
            let response = client.get(url).send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        })
    };
    // The lease is written right after the waiter registers.
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while view(&server, &pending).await["agent_waiting"] != true {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the tokenless wait attached");
    let (status, won) = server.respond(&pending, &yes()).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    let (status, got) = waiter.await.unwrap();
    assert_eq!((status, &got["status"]), (200, &json!("answered")), "{got}");
    assert_eq!(got["response"]["answers"][0]["custom_text"], "go");
    assert_eq!(
        receiver.count(),
        0,
        "delivered once: to the wait, not resumed as well"
    );
    assert_eq!(view(&server, &pending).await["awaiting_pickup"], false);

    // Another session's agent token observes: the agent is resumed.
    let (_, _, other_agent) = server.session(None).await;
    let second = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Again?",
        "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let (status, _) = server
        .as_token(&other_agent)
        .get(&format!("/clarification/{second}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504, "nothing yet");
    assert_eq!(view(&server, &second).await["agent_waiting"], false);
    let (status, won) = server.respond(&second, &yes()).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    assert_eq!(receiver.count(), 1, "the agent is resumed with the answer");
    assert_eq!(receiver.last()["pending_id"], second.as_str());
    server.stop().await;
}

/// A resumed answer costs the writer two units of work (issue 31): the
/// claim, which itself marks the resume attempted so a crash after it
/// keeps the claim rather than resend it (R6), and the settle after the
/// dispatch. The mark was a transaction of its own in between.
#[tokio::test]
async fn a_resumed_answer_is_claimed_marked_and_settled_in_two_units_of_work() {
    let receiver = clarify_tests::Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, question()).await;

    let before = server.db().write_counts();
    let (status, won) = server.respond(&pending, &yes()).await;
    let after = server.db().write_counts();
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    assert_eq!(receiver.count(), 1, "the agent is resumed");
    if !clarify_tests::testing_postgres() {
        assert_eq!(after.units - before.units, 2, "claim and mark, then settle");
    }
    assert_eq!(view(&server, &pending).await["status"], "answered");
    server.stop().await;
}

/// Issue 45 item 4: a decline's reason reached only an agent blocked at
/// that moment; its later wait, the bundle's view and the transcript
/// carried `reject_reason: ""`. The claim keeps it beside the rows now:
/// the asking agent's own delivery (its later wait, which `clarify ask`
/// and `clarify mcp` poll), the view and the transcript carry it, and a
/// losing caller's replay still carries "" (R2b).
#[tokio::test]
async fn a_declines_reason_reaches_the_agent_that_was_away_the_view_and_the_transcript() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question()).await;
    let reason = "Blocked on the upstream serde fix";
    let (status, won) = server
        .respond(
            &pending,
            &json!({"rejected": true, "reject_reason": reason}),
        )
        .await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");

    let read = view(&server, &pending).await;
    assert_eq!(read["status"], "rejected");
    assert_eq!(read["response"]["reject_reason"], reason, "{read}");
    let (status, collected) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 200, "{collected}");
    assert_eq!(collected["response"]["rejected"], true);
    assert_eq!(
        collected["response"]["reject_reason"], reason,
        "{collected}"
    );

    let (_, transcript) = server.get(&format!("/sessions/{session}/messages")).await;
    let asked = transcript["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metadata"]["pending_id"] == pending.as_str())
        .unwrap_or_else(|| panic!("{transcript}"));
    assert_eq!(asked["reject_reason"], reason, "{asked}");

    let (_, replay) = server
        .respond(
            &pending,
            &json!({"rejected": true, "reject_reason": "other"}),
        )
        .await;
    assert_eq!(replay["claimed"], false);
    assert_eq!(
        replay["response"]["reject_reason"], "",
        "R2b: a loser's replay"
    );
    server.stop().await;
}

/// Issue 50: a resumed answer writes its question's row twice, the claim
/// and the settle after the dispatch: the claim's one guarded UPDATE
/// writes the row's final state itself when the row is as the answerer
/// read it. It was three writes (the claim moved the row to `responding`,
/// then wrote its final state), each a trip and an index entry per index
/// of the row on PostgreSQL.
#[tokio::test]
async fn a_resumed_answer_writes_its_row_once_to_claim_it_and_once_to_settle() {
    let receiver = clarify_tests::Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, question()).await;
    count_row_writes(&server).await;

    let (status, won) = server.respond(&pending, &yes()).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    assert_eq!(receiver.count(), 1, "the agent is resumed");
    let (writes,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM row_writes")
        .fetch_one(server.db().pool())
        .await
        .unwrap();
    assert_eq!(writes, 2, "the claim, then the settle");
    assert_eq!(view(&server, &pending).await["status"], "answered");
    server.stop().await;
}

/// Counts every write of a question's row from now on, in `row_writes`.
async fn count_row_writes(server: &TestServer) {
    let sql = if clarify_tests::testing_postgres() {
        "CREATE TABLE row_writes (n INTEGER); \
         CREATE FUNCTION counted() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN INSERT INTO row_writes VALUES (1); RETURN NULL; END $$; \
         CREATE TRIGGER counted AFTER UPDATE ON task_session_messages \
         FOR EACH ROW EXECUTE FUNCTION counted()"
    } else {
        "CREATE TABLE row_writes (n INTEGER); \
         CREATE TRIGGER counted AFTER UPDATE ON task_session_messages \
         BEGIN INSERT INTO row_writes VALUES (1); END"
    };
    server
        .db()
        .write(async |c| sqlx::raw_sql(sql).execute(c).await)
        .await
        .unwrap();
}
