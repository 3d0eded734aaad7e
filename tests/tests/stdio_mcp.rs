//! `clarify mcp` (issue 25): the stdio MCP server an agent's client
//! starts, against a real server over real HTTP, spoken to over the
//! process's real stdin/stdout by the official Rust SDK. What an agent
//! gets is the agent surface's tool exactly (A6, N3a); a restart, a
//! cancelled call, a closed stdin and a server that is not there each
//! behave as a user expects.

use std::time::Duration;

use clarify_tests::TestServer;
use clarify_tests::mcp::{self, err, ok};
use clarify_tests::stdio::{StdioAgent, repository};
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

fn question(prompt: &str) -> Value {
    json!({"questions": [{"prompt": prompt, "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]})
}

/// The bundle waiting on `server` whose first prompt is `prompt`, once
/// the agent's process has asked it.
async fn waiting(server: &TestServer, prompt: &str) -> Value {
    waiting_as(&server.api(), prompt).await
}

async fn waiting_as(api: &clarify_tests::Api<'_>, prompt: &str) -> Value {
    loop {
        let (_, page) = api.get("/pending").await;
        let found = page["bundles"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["questions"][0]["prompt"] == prompt);
        if let Some(bundle) = found {
            return bundle.clone();
        }
        // Another process asks: look again shortly (the test's own time
        // limit ends a wait that never ends).
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The agent's ask, in the background: it blocks until answered.
fn spawn_ask(agent: &StdioAgent, args: Value) -> tokio::task::JoinHandle<CallToolResult> {
    let client = agent.client.clone();
    tokio::spawn(async move { mcp::call(&client, "ask_user_question_kandev", &args).await })
}

async fn call(agent: &StdioAgent, args: &Value) -> CallToolResult {
    mcp::call(&agent.client, "ask_user_question_kandev", args).await
}

#[tokio::test]
async fn a6_the_stdio_tool_is_the_agent_surfaces_tool_exactly() {
    let server = TestServer::start().await;
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let stdio_tools = agent.client.list_all_tools().await.expect("tools/list");

    let (_, _, agent_token) = server.session(None).await;
    let http = mcp::connect(&server, "/mcp/agent", Some(&agent_token)).await;
    let http_tools = http.list_all_tools().await.expect("tools/list");
    assert_eq!(stdio_tools.len(), 1, "one tool: {stdio_tools:?}");
    assert_eq!(
        serde_json::to_value(&stdio_tools).unwrap(),
        serde_json::to_value(&http_tools).unwrap(),
        "name, description and schemas as /mcp/agent's"
    );
    assert!(agent.close().await);
}

#[tokio::test]
async fn n3a_an_answer_over_rest_reaches_the_stdio_agent_as_the_agent_surface_says_it() {
    let server = TestServer::start().await;
    let dir = repository("shop", "feature/cart");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let mut progress = agent.client.service().progress_count();
    let args = json!({
        "questions": [{"prompt": "Which database?", "options": [{"label": "Postgres"}, {"label": "SQLite"}],
                       "default_option_id": "q1_opt2"}],
        "expires_in_seconds": 3600,
    });
    let ask = spawn_ask(&agent, args);
    let bundle = waiting(&server, "Which database?").await;
    let pending_id = bundle["pending_id"].as_str().unwrap().to_owned();
    // Passed through: the expiry and the default.
    assert!(bundle["expires_at"].is_string(), "{bundle}");
    assert_eq!(bundle["questions"][0]["default_option_id"], "q1_opt2");
    // The task is the project; the session says which client and branch.
    let (_, task) = server
        .get(&format!("/tasks/{}", bundle["task_id"].as_str().unwrap()))
        .await;
    assert_eq!(task["title"], "shop", "{task}");
    let (_, session) = server
        .get(&format!(
            "/sessions/{}",
            bundle["session_id"].as_str().unwrap()
        ))
        .await;
    let description = session["description"].as_str().unwrap();
    assert!(description.contains(mcp::CLIENT_NAME), "{description}");
    assert!(description.contains("feature/cart"), "{description}");

    // Progress while it waits (every second here).
    progress.wait_for(|n| *n >= 1).await.unwrap();
    let (status, won) = server
        .respond(&pending_id, &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "with PITR"}]}))
        .await;
    assert_eq!(
        (status, won["claimed"].clone()),
        (200, json!(true)),
        "{won}"
    );
    let out = ok(&ask.await.unwrap());
    assert_eq!(out["pending_id"], pending_id.as_str());
    assert_eq!(out["answers"]["q1"]["selected_labels"], json!(["Postgres"]));
    assert_eq!(out["answers"]["q1"]["custom_text"], "with PITR");
    assert_eq!(
        out["summary"], "User selected: [Postgres]\nUser answered: with PITR",
        "{out}"
    );
    assert_eq!(out["expired"], false);
    assert!(agent.close().await);
}

#[tokio::test]
async fn later_processes_of_a_project_share_its_task_and_each_has_its_own_session() {
    let server = TestServer::start().await;
    let dir = repository("billing", "main");
    let url = server.url("");
    let (first, second) = tokio::join!(
        StdioAgent::start(BINARY, &url, None, &dir),
        StdioAgent::start(BINARY, &url, None, &dir),
    );
    // Both ask at once: two first processes racing to make the task.
    let asks = [(&first, "Ship it?"), (&second, "Ship it today?")]
        .map(|(agent, prompt)| spawn_ask(agent, question(prompt)));
    let a = waiting(&server, "Ship it?").await;
    let b = waiting(&server, "Ship it today?").await;
    assert_eq!(a["task_id"], b["task_id"], "one task per project");
    assert_ne!(a["session_id"], b["session_id"], "a session per process");
    let (_, tasks) = server.get("/tasks").await;
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 1, "{tasks}");
    for bundle in [&a, &b] {
        let id = bundle["pending_id"].as_str().unwrap();
        server.respond(id, &json!({"rejected": true})).await;
    }
    for ask in asks {
        assert_eq!(ok(&ask.await.unwrap())["rejected"], true);
    }
    // A later process of the project finds the same task again.
    assert!(first.close().await && second.close().await);
    let third = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let ask = spawn_ask(&third, question("Again?"));
    let c = waiting(&server, "Again?").await;
    assert_eq!(c["task_id"], a["task_id"]);
    server
        .respond(
            c["pending_id"].as_str().unwrap(),
            &json!({"rejected": true}),
        )
        .await;
    ask.await.unwrap();
    assert!(third.close().await);
}

#[tokio::test]
async fn a_server_restart_while_waiting_is_polled_through_and_the_answer_is_delivered() {
    let server = TestServer::start().await;
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let ask = spawn_ask(&agent, question("Restart-proof?"));
    let pending_id = waiting(&server, "Restart-proof?").await["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let server = server.restart_in_place().await;
    let (status, _) = server
        .respond(
            &pending_id,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
        )
        .await;
    assert_eq!(status, 200);
    let out = ok(&ask.await.unwrap());
    assert_eq!(
        out["pending_id"],
        pending_id.as_str(),
        "the same question, never asked twice"
    );
    assert_eq!(out["answers"]["q1"]["selected_labels"], json!(["SQLite"]));
    let (_, page) = server.get("/pending").await;
    assert_eq!(page["bundles"], json!([]), "nothing asked again: {page}");
    assert!(agent.close().await);
}

#[tokio::test]
async fn a_cancelled_call_detaches_and_the_next_identical_ask_collects_the_answer() {
    let server = TestServer::start().await;
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let args = question("Cancel me?");
    let params = CallToolRequestParams::new("ask_user_question_kandev")
        .with_arguments(args.as_object().unwrap().clone());
    let handle = agent
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("send the call");
    let pending_id = waiting(&server, "Cancel me?").await["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    handle
        .cancel(Some("the user pressed Esc".into()))
        .await
        .expect("notifications/cancelled");
    // Detached, still answerable.
    let view = loop {
        let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
        if view["agent_disconnected"] == true {
            break view;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(view["active"], true, "{view}");
    let (status, won) = server
        .respond(
            &pending_id,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]}),
        )
        .await;
    assert_eq!((status, won["claimed"].clone()), (200, json!(true)));
    // Kept for the agent (pull delivery): its identical ask collects it.
    let out = ok(&call(&agent, &args).await);
    assert_eq!(out["pending_id"], pending_id.as_str());
    assert_eq!(out["answers"]["q1"]["selected_labels"], json!(["Postgres"]));
    assert!(agent.close().await);
}

#[tokio::test]
async fn closing_stdin_ends_the_session_and_its_questions_leave_the_inbox() {
    let server = TestServer::start().await;
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let _ask = spawn_ask(&agent, question("Still there?"));
    let bundle = waiting(&server, "Still there?").await;
    assert!(agent.close().await, "exits cleanly");
    let (_, session) = server
        .get(&format!(
            "/sessions/{}",
            bundle["session_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(session["state"], "COMPLETED", "{session}");
    let (_, view) = server
        .get(&format!(
            "/clarification/{}",
            bundle["pending_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(view["status"], "expired", "{view}");
    let (_, page) = server.get("/pending").await;
    assert_eq!(page["bundles"], json!([]));
}

#[tokio::test]
async fn no_server_is_a_tool_error_that_says_how_to_start_one_within_seconds() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &url, None, &dir).await;
    let result = tokio::time::timeout(Duration::from_secs(10), call(&agent, &question("Anyone?")))
        .await
        .expect("an answer within seconds, never a hang");
    let text = err(&result);
    assert!(text.contains(&format!("not reachable at {url}")), "{text}");
    assert!(text.contains("clarify serve"), "{text}");
    assert!(agent.close().await);
}

#[tokio::test]
async fn a_missing_or_refused_token_is_a_tool_error_that_says_which() {
    let server = TestServer::start_with_auth().await;
    let dir = repository("shop", "main");
    let bare = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let text = err(&call(&bare, &question("Token?")).await);
    assert!(
        text.contains("requires a token") && text.contains("CLARIFY_TOKEN"),
        "{text}"
    );
    let wrong = StdioAgent::start(BINARY, &server.url(""), Some("clk_pat_nope"), &dir).await;
    let text = err(&call(&wrong, &question("Token?")).await);
    assert!(text.contains("refused CLARIFY_TOKEN"), "{text}");

    // With a person's token it asks, on a task of that person's.
    let token = server.token("alice").await;
    let alice = StdioAgent::start(BINARY, &server.url(""), Some(&token), &dir).await;
    let ask = spawn_ask(&alice, question("Token?"));
    let id = waiting_as(&server.as_token(&token), "Token?").await["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .as_token(&token)
        .respond(&id, &json!({"rejected": true}))
        .await;
    assert_eq!(ok(&ask.await.unwrap())["rejected"], true);
    for agent in [bare, wrong, alice] {
        assert!(agent.close().await);
    }
}

#[tokio::test]
async fn a_bad_ask_is_refused_with_the_rules_own_words_before_any_session() {
    let server = TestServer::start().await;
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), None, &dir).await;
    let text = err(&call(&agent, &json!({"questions": []})).await);
    assert!(text.contains("question"), "{text}");
    let text = err(&call(&agent, &json!({"questions": 3})).await);
    assert!(text.starts_with("questions:"), "{text}");
    let (_, tasks) = server.get("/tasks").await;
    assert_eq!(tasks["tasks"], json!([]), "nothing made for a bad ask");
    assert!(agent.close().await);
}

#[tokio::test]
async fn post_tasks_with_a_project_finds_the_callers_task_again_one_per_user() {
    let server = TestServer::start_with_auth().await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let new = json!({"title": "shop", "project": "shop"});
    let (status, first) = server.as_token(&alice).post("/tasks", &new).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = server.as_token(&alice).post("/tasks", &new).await;
    assert_eq!((status, &again["id"]), (200, &first["id"]), "{again}");
    // Bob's project of the same name is his own task.
    let (status, bobs) = server.as_token(&bob).post("/tasks", &new).await;
    assert_eq!(status, 201);
    assert_ne!(bobs["id"], first["id"]);
    // Without a project, a new task every time, as before.
    let plain = json!({"title": "shop"});
    let (status, other) = server.as_token(&alice).post("/tasks", &plain).await;
    assert_eq!(status, 201);
    assert_ne!(other["id"], first["id"]);
    // A project name is bounded like a title, and a refusal makes nothing.
    let long = json!({"title": "x", "project": "p".repeat(501)});
    let (status, body) = server.as_token(&alice).post("/tasks", &long).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().starts_with("project"),
        "{body}"
    );
    // Alice's two, not Bob's project task (issue 45 item 3: it is in his
    // personal workspace).
    let (_, tasks) = server.as_token(&alice).get("/tasks").await;
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 2, "{tasks}");
}

/// Issue 45 item 3: under --auth, alice's `clarify mcp` asks on a task in
/// her personal workspace, so bob neither lists nor answers its questions
/// (L1c, A3: 404), and alice does; with `--workspace` it asks where told.
#[tokio::test]
async fn under_auth_a_stdio_agents_questions_are_seen_and_answered_by_its_user_alone() {
    let server = TestServer::start_with_auth().await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let dir = repository("shop", "main");
    let agent = StdioAgent::start(BINARY, &server.url(""), Some(&alice), &dir).await;
    let ask = spawn_ask(&agent, question("Whose?"));
    let bundle = waiting_as(&server.as_token(&alice), "Whose?").await;
    let id = bundle["pending_id"].as_str().unwrap().to_owned();
    let (status, page) = server.as_token(&bob).get("/pending").await;
    assert_eq!((status, &page["bundles"]), (200, &json!([])), "{page}");
    let (status, body) = server
        .as_token(&bob)
        .respond(&id, &json!({"rejected": true}))
        .await;
    assert_eq!(status, 404, "bob may not answer it: {body}");
    let task_id = bundle["task_id"].as_str().unwrap();
    let (status, _) = server
        .as_token(&bob)
        .get(&format!("/tasks/{task_id}"))
        .await;
    assert_eq!(status, 404, "nor see its task");
    // The task is in alice's personal workspace, which only she lists.
    let (_, task) = server
        .as_token(&alice)
        .get(&format!("/tasks/{task_id}"))
        .await;
    let (_, mine) = server.as_token(&alice).get("/workspaces").await;
    let personal = mine["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == task["workspace_id"])
        .unwrap_or_else(|| panic!("{task} {mine}"));
    assert_eq!(personal["name"], "Personal");
    let (_, bobs) = server.as_token(&bob).get("/workspaces").await;
    assert_eq!(bobs["workspaces"], json!([]), "{bobs}");

    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]});
    let (status, won) = server.as_token(&alice).respond(&id, &answer).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    let out = ok(&ask.await.unwrap());
    assert_eq!(out["answers"]["q1"]["selected_labels"], json!(["SQLite"]));
    assert!(agent.close().await);

    // `--workspace` (CLARIFY_WORKSPACE) names where the task goes instead.
    let (_, team) = server
        .as_token(&alice)
        .post("/workspaces", &json!({"name": "team"}))
        .await;
    let team = team["id"].as_str().unwrap().to_owned();
    let agent = StdioAgent::start_in(BINARY, &server.url(""), Some(&alice), &dir, &team).await;
    let ask = spawn_ask(&agent, question("Where?"));
    let bundle = waiting_as(&server.as_token(&alice), "Where?").await;
    let (_, task) = server
        .as_token(&alice)
        .get(&format!("/tasks/{}", bundle["task_id"].as_str().unwrap()))
        .await;
    assert_eq!(task["workspace_id"], team.as_str(), "{task}");
    let id = bundle["pending_id"].as_str().unwrap();
    server
        .as_token(&alice)
        .respond(id, &json!({"rejected": true}))
        .await;
    assert_eq!(ok(&ask.await.unwrap())["rejected"], true);
    assert!(agent.close().await);
}

/// Issue 45 item 3: racing first project tasks of one user under auth
/// make one personal workspace, and each project one task in it.
#[tokio::test]
async fn racing_first_uses_under_auth_make_one_personal_workspace() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let api = server.as_token(&alice);
    let calls = (0..8).map(|i| {
        let new = json!({"title": "race", "project": format!("race-{}", i % 4)});
        let api = &api;
        async move { api.post("/tasks", &new).await }
    });
    let replies = futures_util::future::join_all(calls).await;
    let workspaces: std::collections::BTreeSet<_> = replies
        .iter()
        .map(|(status, task)| {
            assert!(matches!(status, 200 | 201), "{task}");
            task["workspace_id"].to_string()
        })
        .collect();
    assert_eq!(workspaces.len(), 1, "{replies:?}");
    let tasks: std::collections::BTreeSet<_> =
        replies.iter().map(|(_, t)| t["id"].to_string()).collect();
    assert_eq!(tasks.len(), 4, "one task per project");
    let (_, listed) = api.get("/workspaces").await;
    assert_eq!(
        listed["workspaces"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
}

#[tokio::test]
async fn racing_first_processes_of_a_project_make_one_task() {
    let server = TestServer::start().await;
    for round in 0..10 {
        let new = json!({"title": "race", "project": format!("race-{round}")});
        let calls = (0..8).map(|_| server.post("/tasks", &new));
        let replies = futures_util::future::join_all(calls).await;
        let ids: std::collections::BTreeSet<_> = replies
            .iter()
            .map(|(_, task)| task["id"].to_string())
            .collect();
        assert_eq!(ids.len(), 1, "round {round}: {replies:?}");
        let created = replies.iter().filter(|(status, _)| *status == 201).count();
        assert_eq!(created, 1, "round {round}: exactly one made it");
    }
}
