//! The MCP surfaces through the official Rust SDK as client: the external
//! tools (L*, N*, T*, S*), the agent tool, and R3 — REST and MCP racing to
//! answer the same bundle.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::mcp::{call, connect, err, ok, pending_ids};
use clarify_tests::{Receiver, TestServer, next_event};
use serde_json::{Value, json};

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no", "description": "not now"}]}])
}

fn pick(option: &str) -> Value {
    json!([{"question_id": "q1", "selected_options": [option]}])
}

/// The formats JSON Schema 2020-12 defines (its validation vocabulary, 7.3).
const FORMATS_2020_12: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Calls `visit` on every object of a schema, itself included.
fn walk_schema(node: &Value, visit: &mut dyn FnMut(&serde_json::Map<String, Value>)) {
    match node {
        Value::Object(map) => {
            visit(map);
            map.values().for_each(|v| walk_schema(v, visit));
        }
        Value::Array(items) => items.iter().for_each(|v| walk_schema(v, visit)),
        _ => {}
    }
}

#[tokio::test]
async fn s1_s2_s3_each_surface_lists_exactly_its_tools_with_portable_schemas() {
    let server = TestServer::start().await;
    let external = connect(&server, "/mcp", None).await;
    let mut names: Vec<String> = external
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "answer_question_kandev",
            "answer_with_me_kandev",
            "get_task_conversation_kandev",
            "list_pending_questions_kandev",
            "list_tasks_kandev"
        ]
    );
    let (_, _, agent_token) = server.session(None).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let tools = agent.list_all_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        ["ask_user_question_kandev"]
    );

    for tool in external
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .chain(&tools)
    {
        let schema = serde_json::to_string(&tool.input_schema).unwrap();
        assert!(!schema.contains("\"null\""), "{}: {schema}", tool.name);
        // Issue 30: only JSON Schema 2020-12's own formats (a strict
        // validator such as Ajv2020 refuses a tool over `int64`), and every
        // integer bounded instead.
        let value = serde_json::to_value(&tool.input_schema).unwrap();
        walk_schema(&value, &mut |node| {
            if let Some(format) = node.get("format").and_then(Value::as_str) {
                assert!(
                    FORMATS_2020_12.contains(&format),
                    "{}: format {format} in {schema}",
                    tool.name
                );
            }
            if node.get("type").and_then(Value::as_str) == Some("integer") {
                assert!(
                    node.get("minimum").is_some() && node.get("maximum").is_some(),
                    "{}: an unbounded integer in {schema}",
                    tool.name
                );
            }
        });
        assert!(
            !schema.contains("\"items\":true"),
            "{}: {schema}",
            tool.name
        );
    }
    let list = external.list_all_tools().await.unwrap();
    let pending = list
        .iter()
        .find(|t| t.name == "list_pending_questions_kandev")
        .unwrap();
    assert_eq!(
        pending.input_schema["properties"]["limit"]["type"],
        "integer"
    );
    // N9: answer_question_kandev requires exactly pending_id; listing
    // requires nothing.
    let answer = list
        .iter()
        .find(|t| t.name == "answer_question_kandev")
        .unwrap();
    assert_eq!(
        answer.input_schema.get("required"),
        Some(&serde_json::json!(["pending_id"])),
        "{:?}",
        answer.input_schema
    );
    let required = pending.input_schema.get("required");
    assert!(
        required.is_none_or(|r| r.as_array().is_some_and(Vec::is_empty)),
        "{required:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn l3_l11_a_listed_bundle_carries_every_key_and_answers_over_mcp() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (task, session, agent) = server.session_resumed_by(&receiver).await;
    let client = connect(&server, "/mcp", None).await;

    let empty = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(
        empty,
        json!({"bundles": [], "count": 0, "next_cursor": ""}),
        "L11 empty result"
    );

    let pending = server.ask(&session, &agent, question("Ship?")).await;
    let page = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(page["count"], 1);
    let bundle = &page["bundles"][0];
    clarify_tests::mcp::assert_l3_keys(bundle);
    assert_eq!(
        (bundle["pending_id"].as_str(), bundle["task_id"].as_str()),
        (Some(pending.as_str()), Some(task.as_str()))
    );
    assert_eq!(bundle["context"], "", "L4a: never null");
    let q = &bundle["questions"][0];
    assert_eq!(q["status"], "pending");
    assert_eq!(q["title"], "");
    assert_eq!(
        q["options"][1],
        json!({"option_id": "q1_opt2", "label": "no", "description": "not now"})
    );

    let won = ok(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "answers": pick("q1_opt2")}),
    )
    .await);
    // N3: the winner gets claimed, the recorded status and the response.
    assert_eq!(
        (&won["claimed"], &won["status"]),
        (&json!(true), &json!("answered"))
    );
    assert_eq!(
        won["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    // R1, R4: only the winner, after its claim committed, resumes the agent.
    assert_eq!(receiver.count(), 1, "the detached agent was resumed");
    // N4: a second answer is told the winner, not an error.
    let lost = ok(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "rejected": true, "reason": "late"}),
    )
    .await);
    assert_eq!(lost["claimed"], false);
    assert_eq!(
        lost["response"],
        won["response"]
            .clone()
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert(
                    "responded_at".into(),
                    lost["response"]["responded_at"].clone(),
                );
                Value::Object(o)
            })
            .unwrap()
    );
    assert_eq!(receiver.count(), 1, "R1: the loser resumes nobody");
    let after = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(after["count"], 0);
    server.stop().await;
}

#[tokio::test]
async fn n4a_n5_n8b_errors_name_the_problem() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question("Go?")).await;

    let unknown = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": "nope", "rejected": true}),
    )
    .await);
    assert_eq!(unknown, "clarification request not found");
    let long = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "rejected": true, "reason": "x".repeat(2001)}),
    )
    .await);
    assert!(long.starts_with("reject_reason:"), "{long}");
    let bad = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "answers": pick("q1_opt9")}),
    )
    .await);
    assert!(bad.starts_with("answers[0].selected_options[0]:"), "{bad}");
    let missing = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"answers": pick("q1_opt1")}),
    )
    .await);
    assert!(missing.starts_with("pending_id:"), "{missing}");

    // N4a: inactive with no winner is an error naming it, distinct from both.
    server
        .api()
        .post(&format!("/sessions/{session}/turns"), &json!({}))
        .await;
    let inactive = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "rejected": true}),
    )
    .await);
    assert_eq!(inactive, "clarification request is no longer active");

    for (args, argument) in [
        (json!({"cursor": "garbage"}), "cursor:"),
        (json!({"created_since": "yesterday"}), "created_since:"),
    ] {
        let text = err(&call(&client, "list_pending_questions_kandev", &args).await);
        assert!(text.starts_with(argument), "L13: {text}");
    }
    server.stop().await;
}

/// L13: a wrongly typed argument is a tool error (which the model can
/// correct) naming the argument and what was expected, on every tool of
/// both surfaces, never a protocol error that names nothing.
#[tokio::test]
async fn l13_a_wrongly_typed_argument_is_named_on_both_surfaces() {
    let server = TestServer::start().await;
    let external = connect(&server, "/mcp", None).await;
    let (_, _, agent_token) = server.session(None).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;

    for (client, tool, args, expected) in [
        (
            &external,
            "list_pending_questions_kandev",
            json!({"limit": 2.5}),
            "limit: invalid type: floating point `2.5`, expected an integer",
        ),
        (
            &external,
            "list_pending_questions_kandev",
            json!({"limit": "x"}),
            "limit: invalid type: string \"x\", expected an integer",
        ),
        (
            &external,
            "list_pending_questions_kandev",
            json!({"cursor": 5}),
            "cursor: invalid type: integer `5`, expected a string",
        ),
        (
            &external,
            "get_task_conversation_kandev",
            json!({"task_id": "t", "limit": 2.5}),
            "limit: invalid type: floating point `2.5`, expected an integer",
        ),
        (
            &external,
            "answer_question_kandev",
            json!({"pending_id": "p", "rejected": "yes"}),
            "rejected: invalid type: string \"yes\", expected a boolean",
        ),
        (
            &external,
            "answer_question_kandev",
            json!({"pending_id": "p", "answers": [{"question_id": 1}]}),
            "answers[0].question_id: invalid type: integer `1`, expected a string",
        ),
        (
            &external,
            "list_tasks_kandev",
            json!({"workspace_id": []}),
            "workspace_id: invalid type: sequence, expected a string",
        ),
        (
            &agent,
            "ask_user_question_kandev",
            json!({"questions": "Go?"}),
            "questions: invalid type: string \"Go?\", expected a sequence",
        ),
    ] {
        assert_eq!(
            err(&call(client, tool, &args).await),
            expected,
            "{tool} {args}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn l1a_l9_full_pages_across_workspaces_and_filters() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let mut workspaces = Vec::new();
    for name in ["one", "two"] {
        let (_, ws) = server.post("/workspaces", &json!({"name": name})).await;
        workspaces.push(ws["id"].as_str().unwrap().to_owned());
    }
    let mut asked = Vec::new();
    for i in 0..7 {
        let ws = &workspaces[i % 2];
        let (_, session, agent) = server.api().session_in(ws, None).await;
        asked.push(
            server
                .ask(&session, &agent, question(&format!("q{i}")))
                .await,
        );
    }
    // Pages of 3 are full until the end, and together list each bundle once,
    // oldest first.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = ok(&call(
            &client,
            "list_pending_questions_kandev",
            &json!({"limit": 3, "cursor": cursor}),
        )
        .await);
        let ids = pending_ids(&page);
        assert_eq!(page["count"], ids.len());
        cursor = page["next_cursor"].as_str().unwrap().to_owned();
        if !cursor.is_empty() {
            assert_eq!(ids.len(), 3, "L1a: a page is full while more exist");
        }
        seen.extend(ids);
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(seen, asked);

    let one = ok(&call(
        &client,
        "list_pending_questions_kandev",
        &json!({"workspace_id": workspaces[1]}),
    )
    .await);
    assert_eq!(one["count"], 3, "L7: only workspace two");
    let (_, view) = server.get(&format!("/clarification/{}", asked[6])).await;
    let since = view["created_at"].as_str().unwrap();
    let recent = ok(&call(
        &client,
        "list_pending_questions_kandev",
        &json!({"created_since": since}),
    )
    .await);
    assert_eq!(recent["count"], 1, "L8");
    let both = ok(&call(
        &client,
        "list_pending_questions_kandev",
        &json!({"created_since": since, "cursor": cursor}),
    )
    .await);
    assert_eq!(both["count"], 1, "L14: an empty cursor is no cursor");
    let big = ok(&call(
        &client,
        "list_pending_questions_kandev",
        &json!({"limit": 100_000}),
    )
    .await);
    assert_eq!(big["count"], 7, "L10: clamped, not refused");
    server.stop().await;
}

#[tokio::test]
async fn d6_pages_are_not_a_snapshot_yet_never_skip_a_bundle() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let mut asked = Vec::new();
    for i in 0..5 {
        let (_, session, agent) = server.session(None).await;
        asked.push(
            server
                .ask(&session, &agent, question(&format!("q{i}")))
                .await,
        );
    }
    let list = "list_pending_questions_kandev";
    let first = ok(&call(&client, list, &json!({"limit": 2})).await);
    assert_eq!(pending_ids(&first), asked[..2]);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();

    // Between the pages: one bundle already seen and the one that would
    // open the next page are resolved; another is created with a time
    // before the cursor, as after a clock adjustment.
    for rejected in [&asked[0], &asked[2]] {
        let won = ok(&call(
            &client,
            "answer_question_kandev",
            &json!({"pending_id": rejected, "rejected": true}),
        )
        .await);
        assert_eq!(won["claimed"], true, "{won}");
    }
    let (_, session, agent) = server.session(None).await;
    let backdated = server.ask(&session, &agent, question("backdated")).await;
    server
        .write_sql(
            "UPDATE task_session_messages SET created_at = 1 WHERE pending_id = $1",
            &backdated,
        )
        .await;

    let second = ok(&call(&client, list, &json!({"limit": 2, "cursor": cursor})).await);
    assert_eq!(
        pending_ids(&second),
        asked[3..5],
        "the resolved bundle disappears and nothing shifts past the cursor"
    );
    let fresh = ok(&call(&client, list, &json!({})).await);
    assert_eq!(
        pending_ids(&fresh),
        [&backdated, &asked[1], &asked[3], &asked[4]].map(String::clone),
        "a fresh call lists the backdated bundle"
    );
}

#[tokio::test]
async fn l2_the_list_is_read_from_the_database_so_a_new_process_lists_the_same() {
    let first = TestServer::start().await;
    let (_, session, agent) = first.session(None).await;
    let pending = first.ask(&session, &agent, question("asked before")).await;
    let second = first.replica().await;
    first.stop().await;
    let client = connect(&second, "/mcp", None).await;
    let page = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(pending_ids(&page), [pending]);
    second.stop().await;
}

#[tokio::test]
async fn l2a_l16_superseded_terminal_and_malformed_bundles_are_not_listed() {
    // D4 by its predicates alone, so older bundles need no migration (D4a).
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let (_, superseded_session, agent1) = server.session(None).await;
    server
        .ask(&superseded_session, &agent1, question("old"))
        .await;
    server
        .api()
        .post(&format!("/sessions/{superseded_session}/turns"), &json!({}))
        .await;
    let (_, ended, agent2) = server.session(None).await;
    server.ask(&ended, &agent2, question("ended")).await;
    server
        .api()
        .patch(&format!("/sessions/{ended}"), &json!({"state": "FAILED"}))
        .await;
    let (_, malformed, agent3) = server.session(None).await;
    let broken = server.ask(&malformed, &agent3, question("broken")).await;
    server
        .edit_metadata(&broken, |m| {
            m.insert("question_id".into(), json!(""));
        })
        .await;
    let (_, live, agent4) = server.session(None).await;
    let listed = server.ask(&live, &agent4, question("live")).await;

    let page = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(pending_ids(&page), [listed]);
    let refused = err(&call(
        &client,
        "answer_question_kandev",
        &json!({"pending_id": broken, "rejected": true}),
    )
    .await);
    assert!(
        refused.contains("question_id"),
        "L16 refused before the claim: {refused}"
    );
    server.stop().await;
}

#[tokio::test]
async fn t1_t2_list_tasks_and_read_a_conversation() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let (waiting, session, agent) = server.session(None).await;
    let (idle, _, _) = server.session(None).await;
    server.ask(&session, &agent, question("Hmm?")).await;
    let tasks = ok(&call(&client, "list_tasks_kandev", &json!({})).await);
    let by_id = |id: &str| {
        tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id(&waiting)["task_pending_action"], "clarification");
    let clean = by_id(&idle);
    assert!(
        clean
            .as_object()
            .unwrap()
            .contains_key("task_pending_action"),
        "T2 key present"
    );
    assert_eq!(clean["task_pending_action"], Value::Null);
    assert_eq!(clean["primary_session_pending_action"], Value::Null);

    let conversation = ok(&call(
        &client,
        "get_task_conversation_kandev",
        &json!({"task_id": waiting, "limit": 1}),
    )
    .await);
    assert_eq!(conversation["count"], 1);
    assert_eq!(conversation["messages"][0]["type"], "clarification_request");
    let missing = err(&call(
        &client,
        "get_task_conversation_kandev",
        &json!({"task_id": "nope"}),
    )
    .await);
    assert_eq!(missing, "task not found");
    server.stop().await;
}

#[tokio::test]
async fn r3_rest_and_mcp_race_with_exactly_one_winner() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let client = connect(&server, "/mcp", None).await;
    let iterations = 30;
    for i in 0..iterations {
        let pending = server
            .ask(&session, &agent, question(&format!("race {i}")))
            .await;
        let rest_body = json!({"answers": pick("q1_opt1")});
        let mcp_args = json!({"pending_id": pending, "answers": pick("q1_opt2")});
        let rest = server.respond(&pending, &rest_body);
        let over_mcp = call(&client, "answer_question_kandev", &mcp_args);
        let ((status, rest), mcp_result) = tokio::join!(rest, over_mcp);
        assert_eq!(status, 200, "{rest}");
        let mcp_body = ok(&mcp_result);
        let claims = [&rest["claimed"], &mcp_body["claimed"]];
        assert_eq!(
            claims.iter().filter(|c| ***c == json!(true)).count(),
            1,
            "iteration {i}: {rest} / {mcp_body}"
        );
        // The loser is told the winner's answer, byte for byte.
        let answers = |v: &Value| serde_json::to_string(&v["response"]["answers"]).unwrap();
        assert_eq!(answers(&rest), answers(&mcp_body), "iteration {i}");
        assert_eq!(receiver.count(), i + 1, "one resume per bundle");
    }
    server.stop().await;
}

#[tokio::test]
async fn the_agent_blocks_until_a_rest_answer_with_progress_meanwhile() {
    let server = TestServer::start_with(Config {
        progress_interval: Some(Duration::from_millis(50)),
        ..Config::default()
    })
    .await;
    let (_, _, agent_token) = server.session(None).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let mut progress = agent.service().progress_count();
    let mut socket = server.events().await;

    let asking = tokio::spawn(async move {
        call(
            &agent,
            "ask_user_question_kandev",
            &json!({
                "questions": [{"title": "DB", "prompt": "Which database?",
                               "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]}],
                "context": "We are choosing storage."
            }),
        )
        .await
    });
    let added = next_event(&mut socket, "session.message.added").await;
    let pending = added["payload"]["metadata"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // While nobody answers, the call reports progress (and stays open).
    progress.wait_for(|n| *n >= 2).await.unwrap();
    assert!(!asking.is_finished());

    let (status, won) = server
        .respond(&pending, &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": " replicas "}]}))
        .await;
    assert_eq!(
        (status, &won["claimed"]),
        (200, &json!(true)),
        "delivered live: {won}"
    );
    let result = ok(&asking.await.unwrap());
    assert_eq!(result["pending_id"], pending.as_str());
    assert_eq!(result["rejected"], false);
    assert_eq!(
        result["answers"]["q1"],
        json!({"selected_options": ["q1_opt2"], "selected_labels": ["PostgreSQL"], "custom_text": "replicas"})
    );
    assert_eq!(
        result["summary"],
        "User selected: [PostgreSQL]\nUser answered: replicas"
    );
    server.stop().await;
}

#[tokio::test]
async fn cancelling_the_call_detaches_and_a_later_answer_resumes_the_agent() {
    use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
    use rmcp::service::PeerRequestOptions;

    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, agent_token) = server.session_resumed_by(&receiver).await;
    let agent = connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let mut socket = server.events().await;
    let arguments = json!({"questions": [{"prompt": "Continue?", "options": [{"label": "yes"}, {"label": "no"}]}]});
    let handle = agent
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(
                CallToolRequestParams::new("ask_user_question_kandev")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let added = next_event(&mut socket, "session.message.added").await;
    let pending = added["payload"]["metadata"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    handle
        .cancel(Some("the agent moved on".into()))
        .await
        .unwrap();

    let detached = next_event(&mut socket, "session.message.updated").await;
    assert_eq!(
        detached["payload"]["metadata"]["agent_disconnected"], true,
        "{detached}"
    );
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        (&view["active"], &view["agent_disconnected"]),
        (&json!(true), &json!(true))
    );

    let (status, _) = server
        .respond(
            &pending,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(receiver.count(), 1);
    assert_eq!(receiver.last()["session_id"], session.as_str());
    server.stop().await;
}

/// A `tools/list` without a token is refused with 401 and a Bearer challenge.
async fn assert_refused_without_a_token(server: &TestServer, path: &str) {
    let response = server
        .client()
        .post(server.url(path))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
}

#[tokio::test]
async fn the_agent_surface_needs_an_agent_token_and_asks_on_its_own_session() {
    let server = TestServer::start().await;
    assert_refused_without_a_token(&server, "/mcp/agent").await;
    server.stop().await;
}

#[tokio::test]
async fn with_auth_on_mcp_needs_a_token_and_sees_only_the_callers_bundles() {
    let server = TestServer::start_with(Config {
        auth: true,
        ..Config::default()
    })
    .await;
    assert_refused_without_a_token(&server, "/mcp").await;

    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (_, ws) = server
        .as_token(&alice)
        .post("/workspaces", &json!({"name": "a"}))
        .await;
    let (_, session, agent) = server
        .as_token(&alice)
        .session_in(ws["id"].as_str().unwrap(), None)
        .await;
    let pending = server.ask(&session, &agent, question("Private?")).await;

    let bob_client = connect(&server, "/mcp", Some(&bob)).await;
    let page = ok(&call(&bob_client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(page["count"], 0);
    let foreign = err(&call(
        &bob_client,
        "answer_question_kandev",
        &json!({"pending_id": pending, "rejected": true}),
    )
    .await);
    let fabricated = err(&call(
        &bob_client,
        "answer_question_kandev",
        &json!({"pending_id": "fabricated", "rejected": true}),
    )
    .await);
    assert_eq!(foreign, fabricated, "N5");
    let filtered = ok(&call(
        &bob_client,
        "list_pending_questions_kandev",
        &json!({"workspace_id": ws["id"]}),
    )
    .await);
    assert_eq!(
        filtered["count"], 0,
        "L7: a foreign workspace lists like an empty one"
    );

    let alice_client = connect(&server, "/mcp", Some(&alice)).await;
    let page = ok(&call(&alice_client, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(page["bundles"][0]["pending_id"], pending.as_str());
    server.stop().await;
}

/// Issue 30: a body that is not one JSON-RPC message is a `400` with a
/// JSON-RPC error object on both surfaces (rmcp answered `415` in plain
/// text), and a well-formed message still reaches the server.
#[tokio::test]
async fn malformed_json_rpc_is_a_400_with_a_json_rpc_error_on_both_surfaces() {
    let server = TestServer::start().await;
    let (_, _, agent) = server.session(None).await;
    let http = reqwest::Client::new();
    let post = async |path: &str, token: Option<&str>, body: &str| {
        let mut request = http
            .post(server.url(path))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    };
    for (path, token) in [("/mcp", None), ("/mcp/agent", Some(agent.as_str()))] {
        for (body, code) in [
            (r#"{"jsonrpc":"2.0","#, -32700),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
            (r#"{"jsonrpc":"2.0","id":1}"#, -32600),
            ("42", -32600),
        ] {
            let (status, text) = post(path, token, body).await;
            assert_eq!(status, 400, "{path} {body}: {text}");
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(answer["error"]["code"], code, "{path} {body}: {answer}");
            assert_eq!(answer["jsonrpc"], "2.0");
            assert_eq!(answer["id"], Value::Null);
        }
        // One message, well formed: rmcp answers it (an initialize).
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"}}});
        let (status, text) = post(path, token, &initialize.to_string()).await;
        assert_eq!(status, 200, "{path}: {text}");
        assert!(text.contains("serverInfo"), "{path}: {text}");
    }
    server.stop().await;
}
