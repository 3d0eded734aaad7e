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
/// (issue 27, item 3): a tokenless wait, or another session's agent, is an
/// observer and leaves the kept answer to the asking agent. Before, every
/// caller without auth counted as the asking agent and collected it.
#[tokio::test]
async fn without_auth_only_the_asking_agents_token_collects_a_kept_answer() {
    let server = TestServer::start().await;
    let (pending, agent, won) = answered_while_away(&server).await;
    let (_, _, other_agent) = server.session(None).await;
    for observer in [None, Some(other_agent.as_str())] {
        let path = format!("/clarification/{pending}/wait?timeout=1");
        let (status, seen) = match observer {
            Some(token) => server.as_token(token).get(&path).await,
            None => server.get(&path).await,
        };
        assert_eq!(
            (status, &seen["status"]),
            (200, &json!("answered")),
            "{seen}"
        );
        assert_eq!(
            view(&server, &pending).await["awaiting_pickup"],
            true,
            "{observer:?} only observed"
        );
    }
    let (status, collected) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
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

/// With auth off, a tokenless poller is no longer taken for the agent
/// (issue 27, item 3): before, its wait attached for the grace period, so
/// an answer meant for an agent that had moved on was handed to the poller
/// and the agent was never resumed. Now the agent is resumed.
#[tokio::test]
async fn without_auth_a_tokenless_poller_does_not_take_the_agents_live_delivery() {
    let receiver = clarify_tests::Receiver::start().await;
    let server = TestServer::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, question()).await;

    let (status, _) = server
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504, "nothing yet");
    assert_eq!(
        view(&server, &pending).await["agent_waiting"],
        false,
        "an observer's poll attaches nobody"
    );
    let (status, won) = server.respond(&pending, &yes()).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    assert_eq!(receiver.count(), 1, "the agent is resumed with the answer");
    assert_eq!(receiver.last()["pending_id"], pending.as_str());

    // The agent's own poll, by contrast, attaches it.
    let second = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Again?",
        "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let (status, _) = server
        .as_token(&agent)
        .get(&format!("/clarification/{second}/wait?timeout=1"))
        .await;
    assert_eq!(status, 504);
    assert_eq!(view(&server, &second).await["agent_waiting"], true);
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
