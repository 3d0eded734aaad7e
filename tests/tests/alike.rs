//! The same question from many agents, answered once (issue 29 item 5):
//! `similar_key` in the REST and MCP lists, and `respond-alike`, which
//! settles each bundle through its own claim (P1, R2). Runs on SQLite and,
//! in the test command's second pass, on PostgreSQL.

use clarify_tests::TestServer;
use clarify_tests::mcp::{call, connect, ok};
use serde_json::{Value, json};

fn database() -> Value {
    json!([{"prompt": "Postgres or SQLite?", "options": [{"label": "Postgres"}, {"label": "SQLite"}]}])
}

fn sqlite() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]})
}

/// `n` sessions of their own each asking `questions` with its own context;
/// their pending ids.
async fn asked(server: &TestServer, n: usize, questions: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let (_, session, agent) = server.session(None).await;
        let (status, body) = server
            .as_token(&agent)
            .post(
                "/clarification/request",
                &json!({"session_id": session, "context": format!("shard {i}"), "questions": questions}),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["pending_id"].as_str().unwrap().to_owned());
    }
    ids
}

fn keys_by_id(page: &Value) -> Vec<(String, String)> {
    page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["pending_id"].as_str().unwrap().to_owned(),
                b["similar_key"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn alike_bundles_share_a_similar_key_in_rest_and_mcp_lists_and_others_do_not() {
    let server = TestServer::start().await;
    let same = asked(&server, 3, &database()).await;
    let other = asked(
        &server,
        1,
        &json!([{"prompt": "Postgres or SQLite?", "options": [{"label": "Postgres"}, {"label": "MySQL"}]}]),
    )
    .await;
    let (status, page) = server.get("/pending").await;
    assert_eq!(status, 200, "{page}");
    let rest = keys_by_id(&page);
    let key_of = |id: &str| rest.iter().find(|(p, _)| p == id).unwrap().1.clone();
    let key = key_of(&same[0]);
    assert_eq!(key.len(), 32, "{key}");
    assert!(same.iter().all(|id| key_of(id) == key), "{rest:?}");
    assert_ne!(key_of(&other[0]), key);

    // The bundle's own view and the MCP list say the same.
    let (_, view) = server.get(&format!("/clarification/{}", same[1])).await;
    assert_eq!(view["similar_key"], key.as_str());
    let client = connect(&server, "/mcp", None).await;
    let listed = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(keys_by_id(&listed).len(), rest.len());
    for (id, k) in keys_by_id(&listed) {
        assert_eq!(k, key_of(&id), "{id}");
    }
    server.stop().await;
}

#[tokio::test]
async fn one_answer_settles_each_alike_bundle_and_one_answered_elsewhere_keeps_its_winner() {
    let server = TestServer::start().await;
    let ids = asked(&server, 4, &database()).await;
    // Bundle 2 is answered first, elsewhere, with the other option.
    let postgres = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&ids[2], &postgres).await.0, 200);

    let (status, body) = server
        .post(
            "/clarification/respond-alike",
            &json!({"pending_ids": ids, "response": sqlite()}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let outcomes = body["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 4);
    for (i, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome["pending_id"], ids[i].as_str());
        let won = i != 2;
        assert_eq!(outcome["claimed"], won, "{outcome}");
        assert_eq!(outcome["status"], "answered", "{outcome}");
        let chosen = if won { "q1_opt2" } else { "q1_opt1" };
        assert_eq!(
            outcome["response"]["answers"][0]["selected_options"],
            json!([chosen]),
            "R2: the loser is told the winner's answer: {outcome}"
        );
        let (_, view) = server.get(&format!("/clarification/{}", ids[i])).await;
        assert_eq!(
            view["response"]["answers"][0]["selected_options"],
            json!([chosen])
        );
        // Provenance says it was one answer for four; the earlier winner's does not.
        assert_eq!(
            view["answered_by"].get("alike").and_then(Value::as_u64),
            won.then_some(3),
            "{view}"
        );
    }
    let (_, page) = server.get("/pending").await;
    assert!(keys_by_id(&page).iter().all(|(id, _)| !ids.contains(id)));
    server.stop().await;
}

#[tokio::test]
async fn nothing_is_claimed_unless_every_bundle_is_alike_visible_and_the_answer_fits() {
    let server = TestServer::start_with_auth().await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let owner = server.as_token(&alice);
    let (_, workspace) = owner.post("/workspaces", &json!({"name": "alice's"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let mut mine = Vec::new();
    for _ in 0..2 {
        let (_, session, agent) = owner.session_in(&workspace, None).await;
        mine.push(server.as_token(&agent).ask(&session, database()).await);
    }
    let (_, session, agent) = owner.session_in(&workspace, None).await;
    let different = server
        .as_token(&agent)
        .ask(
            &session,
            json!([{"prompt": "Postgres or SQLite?", "options": [{"label": "Postgres"}, {"label": "SQLite"}, {"label": "Both"}]}]),
        )
        .await;
    let path = "/clarification/respond-alike";
    let many: Vec<String> = (0..51).map(|i| format!("p{i}")).collect();
    for (body, code, said) in [
        (
            json!({"pending_ids": [], "response": sqlite()}),
            400,
            "pending_ids: 1 to 50",
        ),
        (
            json!({"pending_ids": many, "response": sqlite()}),
            400,
            "pending_ids: 1 to 50",
        ),
        (
            json!({"pending_ids": [mine[0], mine[0]], "response": sqlite()}),
            400,
            "pending_ids[1]",
        ),
        (
            json!({"pending_ids": [mine[0], different], "response": sqlite()}),
            400,
            "pending_ids[1]: does not ask the same questions",
        ),
        (
            json!({"pending_ids": mine, "response": {"answers": [{"question_id": "q1", "selected_options": ["q1_opt9"]}]}}),
            400,
            "response:",
        ),
        (
            json!({"pending_ids": mine, "response": sqlite(), "extra": 1}),
            422,
            "extra",
        ),
    ] {
        let (status, answer) = owner.post(path, &body).await;
        assert_eq!(status, code, "{body}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(said), "{answer}");
    }
    // Bob sees none of alice's bundles: 404, as for one bundle.
    let (status, _) = server
        .as_token(&bob)
        .post(path, &json!({"pending_ids": mine, "response": sqlite()}))
        .await;
    assert_eq!(status, 404);
    // An agent answers no question of its own, however grouped.
    let (status, _) = server
        .as_token(&agent)
        .post(
            path,
            &json!({"pending_ids": [different], "response": sqlite()}),
        )
        .await;
    assert_eq!(status, 403);
    for id in mine.iter().chain([&different]) {
        let view = owner.bundle(id).await;
        assert!(view.active, "nothing was claimed: {id}");
    }
    server.stop().await;
}

#[tokio::test]
async fn racing_a_single_answer_each_bundle_has_exactly_one_winner() {
    // Real concurrency, many rounds: respond-alike against a plain respond
    // on one of its bundles.
    let server = TestServer::start().await;
    for round in 0..20 {
        let ids = asked(&server, 3, &database()).await;
        let postgres = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
        let grouped = json!({"pending_ids": ids, "response": sqlite()});
        let alike = server.post("/clarification/respond-alike", &grouped);
        let single = server.respond(&ids[1], &postgres);
        let ((status, body), (single_status, single_body)) = tokio::join!(alike, single);
        assert_eq!((status, single_status), (200, 200), "{body} {single_body}");
        let grouped_won = body["outcomes"][1]["claimed"].as_bool().unwrap();
        let single_won = single_body["claimed"].as_bool().unwrap();
        assert!(
            grouped_won ^ single_won,
            "round {round}: exactly one winner"
        );
        let winner = if grouped_won { "q1_opt2" } else { "q1_opt1" };
        assert_eq!(
            single_body["response"]["answers"][0]["selected_options"],
            json!([winner]),
            "round {round}"
        );
        assert_eq!(body["outcomes"][0]["claimed"], true);
        assert_eq!(body["outcomes"][2]["claimed"], true);
    }
    server.stop().await;
}

/// A bundle whose agent cannot be resumed (its webhook refuses: the claim
/// is rolled back, R7a) neither undoes nor hides the others: each says how
/// it ended, that one why, and it stays answerable.
#[tokio::test]
async fn one_bundle_that_cannot_be_delivered_leaves_the_others_settled_and_says_why() {
    let server = TestServer::start().await;
    let receiver = clarify_tests::Receiver::start().await;
    let mut ids = asked(&server, 1, &database()).await;
    let (_, session, agent) = server
        .session(Some(json!({"webhook_url": receiver.refusing_url()})))
        .await;
    ids.push(server.ask(&session, &agent, database()).await);
    ids.extend(asked(&server, 1, &database()).await);

    let (status, body) = server
        .post(
            "/clarification/respond-alike",
            &json!({"pending_ids": ids, "response": sqlite()}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let outcomes = body["outcomes"].as_array().unwrap();
    for i in [0, 2] {
        assert_eq!(
            (
                outcomes[i]["claimed"].as_bool(),
                outcomes[i]["error"].as_str()
            ),
            (Some(true), Some("")),
            "{body}"
        );
    }
    assert_eq!(outcomes[1]["claimed"], false, "{body}");
    assert_eq!(outcomes[1]["status"], Value::Null, "{body}");
    assert_eq!(
        outcomes[1]["error"],
        "the answer could not be delivered to the agent; the question is still open"
    );
    let (_, view) = server.get(&format!("/clarification/{}", ids[1])).await;
    assert_eq!(view["active"], true, "answerable again: {view}");
    for i in [0, 2] {
        let (_, view) = server.get(&format!("/clarification/{}", ids[i])).await;
        assert_eq!(view["status"], "answered", "{view}");
    }
    server.stop().await;
}
