//! Authorization in both modes (A1–A9, L1b–L1d, "Permissions"): auth off keeps
//! every caller unscoped with exactly the A4 carve-outs; auth on scopes every
//! route, every bundle and every event to the caller's workspaces.

use clarify_server::Config;
use clarify_tests::{Receiver, TestServer, mcp};
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

fn question() -> Value {
    json!([{"prompt": "Which?", "options": [{"label": "a"}, {"label": "b"}]}])
}

fn pick(option: &str) -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": [option]}]})
}

async fn auth_server() -> TestServer {
    TestServer::start_with_auth().await
}

/// A workspace owned by the holder of `token`, a task and session in it,
/// and an active bundle; returns (workspace, task, session, pending id).
async fn owned_bundle(server: &TestServer, token: &str) -> (String, String, String, String) {
    let user = server.as_token(token);
    let (status, workspace) = user.post("/workspaces", &json!({"name": "mine"})).await;
    assert_eq!(status, 201, "{workspace}");
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let (task, session, agent) = user.session_in(&workspace, None).await;
    let pending = server.ask(&session, &agent, question()).await;
    (workspace, task, session, pending)
}

#[tokio::test]
async fn a4_auth_off_every_caller_is_unscoped_with_the_six_carve_outs() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let (_, session, agent) = server.session_resumed_by(&receiver).await;
    let pending = server.ask(&session, &agent, question()).await;

    // 2: a success carries claimed, status and response.
    let (status, won) = server.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 200);
    for key in ["success", "claimed", "status", "response"] {
        assert!(won.as_object().unwrap().contains_key(key), "{key}: {won}");
    }
    // 1: a duplicate is 200 claimed:false with the winner's payload, not 409.
    let (status, lost) = server.respond(&pending, &pick("q1_opt2")).await;
    assert_eq!((status, &lost["claimed"]), (200, &json!(false)));
    assert_eq!(lost["response"]["answers"], won["response"]["answers"]);
    // 3 and 6: no durable messages → 404, on /wait too (not 504).
    assert_eq!(server.get("/clarification/fabricated").await.0, 404);
    assert_eq!(
        server
            .get("/clarification/fabricated/wait?timeout=1")
            .await
            .0,
        404
    );
    // 4: the new validation rules (N8, N8a, N8b).
    let fresh = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Again?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    for bad in [
        pick("nope"),
        json!({"rejected": true, "answers": [{"question_id": "q1"}]}),
        json!({"rejected": true, "reject_reason": "x".repeat(2001)}),
    ] {
        assert_eq!(server.respond(&fresh, &bad).await.0, 400, "{bad}");
    }
    // 5: L16 is refused before the claim.
    server
        .edit_metadata(&fresh, |m| {
            m.remove("question_id");
        })
        .await;
    assert_eq!(server.respond(&fresh, &pick("q1_opt1")).await.0, 400);
    // And nobody is ever denied: no token needed anywhere.
    assert_eq!(server.get("/workspaces").await.0, 200);
    assert_eq!(
        server.get(&format!("/clarification/{pending}")).await.0,
        200
    );
    server.stop().await;
}

#[tokio::test]
async fn without_identity_every_api_route_is_401() {
    let server = auth_server().await;
    let routes = [
        ("GET", "/workspaces"),
        ("GET", "/tasks"),
        ("POST", "/tasks"),
        ("GET", "/clarification/x"),
        ("GET", "/clarification/x/wait"),
        ("POST", "/clarification/x/respond"),
        ("POST", "/clarification/x/cancel"),
        ("GET", "/sessions/x/messages"),
        ("GET", "/ws"),
    ];
    for (method, path) in routes {
        let request = server.client().request(
            method.parse().unwrap(),
            server.url(&format!("/api/v1{path}")),
        );
        for attempt in [
            request.try_clone().unwrap(),
            request.bearer_auth("clk_pat_forged"),
        ] {
            let response = attempt.send().await.unwrap();
            assert_eq!(response.status(), 401, "{method} {path}");
            assert_eq!(response.headers()["www-authenticate"], "Bearer");
        }
    }
    let (status, me) = server.get("/auth/me").await;
    assert_eq!(
        (status, me),
        (200, json!({"auth_enabled": true, "user": null}))
    );
    server.stop().await;
}

#[tokio::test]
async fn a3_a5a_a_foreign_bundle_is_indistinguishable_from_a_fabricated_one() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (_, _, _, pending) = owned_bundle(&server, &alice).await;
    let bob_api = server.as_token(&bob);
    for id in [pending.as_str(), "fabricated-id"] {
        let answers = [
            bob_api.get(&format!("/clarification/{id}")).await,
            bob_api
                .get(&format!("/clarification/{id}/wait?timeout=1"))
                .await,
            bob_api.respond(id, &pick("q1_opt1")).await,
            bob_api
                .post(&format!("/clarification/{id}/cancel"), &json!({}))
                .await,
        ];
        for answer in answers {
            assert_eq!(
                answer,
                (404, json!({"error": "clarification request not found"})),
                "{id}"
            );
        }
    }
    // Bob's attempts changed nothing; Alice still answers it.
    let (status, won) = server
        .as_token(&alice)
        .respond(&pending, &pick("q1_opt2"))
        .await;
    assert_eq!(status, 200, "kept for the agent to collect: {won}");
    let (_, view) = server
        .as_token(&alice)
        .get(&format!("/clarification/{pending}"))
        .await;
    assert_eq!(
        (&view["status"], &view["awaiting_pickup"]),
        (&json!("answered"), &json!(true)),
        "Alice's answer stands, kept for the agent"
    );
    server.stop().await;
}

#[tokio::test]
async fn l1b_l1c_l1d_unowned_workspaces_dangling_references_and_no_workspace_are_shared() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (mine, my_task, _, _) = owned_bundle(&server, &alice).await;
    // A workspace with no owner (created before auth was turned on).
    server.db().write(async |c| sqlx::query("INSERT INTO workspaces (id, name, owner_id, created_at) VALUES ('shared', 'shared', '', 0)")
        .execute(c).await).await
        .unwrap();
    let (shared_task, shared_session, shared_agent) =
        server.as_token(&alice).session_in("shared", None).await;
    let (no_ws_task, no_ws_session, no_ws_agent) = server.as_token(&alice).session(None).await;
    // A task whose workspace row is gone.
    let (dangling_task, dangling_session, dangling_agent) =
        server.as_token(&alice).session(None).await;
    server
        .write_sql(
            "UPDATE tasks SET workspace_id = 'deleted-workspace' WHERE id = $1",
            &dangling_task,
        )
        .await;
    let mut shared_questions = Vec::new();
    for (session, agent) in [
        (&shared_session, &shared_agent),
        (&no_ws_session, &no_ws_agent),
        (&dangling_session, &dangling_agent),
    ] {
        shared_questions.push(server.ask(session, agent, question()).await);
    }

    let (_, tasks) = server.as_token(&bob).get("/tasks").await;
    let mut seen: Vec<&str> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    seen.sort_unstable();
    let mut expected = vec![
        shared_task.as_str(),
        no_ws_task.as_str(),
        dangling_task.as_str(),
    ];
    expected.sort_unstable();
    assert_eq!(seen, expected, "Bob sees all but Alice's own workspace");
    // L1b: Bob owns no workspace, and the pending list still carries L1d's
    // other disjuncts: the empty, the dangling and the unowned workspace.
    let bob_mcp = mcp::connect(&server, "/mcp", Some(&bob)).await;
    let page = mcp::ok(&mcp::call(&bob_mcp, "list_pending_questions_kandev", &json!({})).await);
    assert_eq!(mcp::pending_ids(&page), shared_questions, "L1b: {page}");
    // The same scope over REST (the inbox's list).
    let (status, page) = server.as_token(&bob).get("/pending").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        mcp::pending_ids(&page),
        shared_questions,
        "L1b REST: {page}"
    );
    assert_eq!(
        server
            .as_token(&bob)
            .get(&format!("/tasks/{my_task}"))
            .await
            .0,
        404
    );
    let (_, workspaces) = server.as_token(&bob).get("/workspaces").await;
    let names: Vec<&str> = workspaces["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["shared"]);
    // Bob cannot put a task into Alice's workspace, nor read her transcripts.
    let (status, _) = server
        .as_token(&bob)
        .post("/tasks", &json!({"title": "t", "workspace_id": mine}))
        .await;
    assert_eq!(status, 404);
    let (_, alice_tasks) = server.as_token(&alice).get("/tasks").await;
    assert_eq!(alice_tasks["tasks"].as_array().unwrap().len(), 4);
    server.stop().await;
}

#[tokio::test]
async fn a_user_cannot_reach_another_users_sessions() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (_, task, session, _) = owned_bundle(&server, &alice).await;
    let bob_api = server.as_token(&bob);
    assert_eq!(
        bob_api
            .get(&format!("/sessions/{session}/messages"))
            .await
            .0,
        404
    );
    assert_eq!(
        bob_api
            .patch(
                &format!("/sessions/{session}"),
                &json!({"state": "COMPLETED"})
            )
            .await
            .0,
        404
    );
    assert_eq!(
        bob_api
            .post(&format!("/sessions/{session}/turns"), &json!({}))
            .await
            .0,
        404
    );
    assert_eq!(
        bob_api
            .post(&format!("/tasks/{task}/sessions"), &json!({}))
            .await
            .0,
        404
    );
    let (_, transcript) = server
        .as_token(&alice)
        .get(&format!("/sessions/{session}/messages"))
        .await;
    assert_eq!(transcript["messages"].as_array().unwrap().len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn an_agent_token_sees_its_own_session_only() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let (workspace, _, _, pending) = owned_bundle(&server, &alice).await;
    let (_, _, other_agent) = server.as_token(&alice).session_in(&workspace, None).await;
    let other = server.as_token(&other_agent);
    assert_eq!(other.get(&format!("/clarification/{pending}")).await.0, 404);
    assert_eq!(
        other.get("/tasks").await.0,
        403,
        "agent tokens only ask and wait"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_owning_agent_can_wait_but_not_answer() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let user = server.as_token(&alice);
    let (task, session, agent) = user.session(None).await;
    let _ = task;
    let pending = server.ask(&session, &agent, question()).await;
    let me = server.as_token(&agent);
    assert_eq!(
        me.get(&format!("/clarification/{pending}/wait?timeout=1"))
            .await
            .0,
        504
    );
    let (status, body) = me.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!(status, 403, "{body}");
    // Attached (it just polled), so Alice's answer is delivered live.
    let (status, won) = user.respond(&pending, &pick("q1_opt1")).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    let (status, got) = me
        .get(&format!("/clarification/{pending}/wait?timeout=1"))
        .await;
    assert_eq!((status, &got["status"]), (200, &json!("answered")));
    server.stop().await;
}

#[tokio::test]
async fn events_reach_only_users_who_may_see_the_task() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let connect = async |token: &str| {
        let mut request = server
            .url("/api/v1/ws")
            .replace("http://", "ws://")
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        tokio_tungstenite::connect_async(request).await.unwrap().0
    };
    let mut alice_socket = connect(&alice).await;
    let mut bob_socket = connect(&bob).await;
    async fn next(
        socket: &mut tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
    ) -> Value {
        loop {
            if let Message::Text(text) = socket.next().await.unwrap().unwrap() {
                return serde_json::from_str(&text).unwrap();
            }
        }
    }

    let (_, _, _, secret) = owned_bundle(&server, &alice).await;
    let added = next(&mut alice_socket).await;
    assert_eq!(added["payload"]["metadata"]["pending_id"], secret.as_str());

    // Bob's first event is about his own task, never Alice's question.
    let (_, bob_session, bob_agent) = server.as_token(&bob).session(None).await;
    let his = server.ask(&bob_session, &bob_agent, question()).await;
    let first = next(&mut bob_socket).await;
    assert_eq!(first["action"], "session.message.added");
    assert_eq!(
        first["payload"]["metadata"]["pending_id"],
        his.as_str(),
        "{first}"
    );
    server.stop().await;
}

#[tokio::test]
async fn browser_login_sets_an_httponly_cookie_and_logout_ends_it() {
    let server = auth_server().await;
    let alice = server.token("alice").await;
    let client = reqwest::Client::new();
    let log_in = async |token: &str| {
        client
            .post(server.url("/api/v1/auth/login"))
            .json(&json!({"token": token}))
            .send()
            .await
            .unwrap()
    };
    let login = log_in(&alice).await;
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    assert!(!cookie.contains(&alice), "the cookie is not the token");
    let pair = cookie.split(';').next().unwrap().to_owned();

    let with_cookie = |path: &str| client.get(server.url(path)).header("cookie", &pair).send();
    assert_eq!(
        with_cookie("/api/v1/workspaces").await.unwrap().status(),
        200
    );
    let me: Value = with_cookie("/api/v1/auth/me")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["user"]["name"], "alice");

    let logout = client
        .post(server.url("/api/v1/auth/logout"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert!(
        logout.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(
        with_cookie("/api/v1/workspaces").await.unwrap().status(),
        401
    );

    // Issue 29: what was pasted is said apart from a token unknown here,
    // and both say how to get one.
    let refused = async |token: &str| {
        let bad = log_in(token).await;
        assert_eq!(bad.status(), 401, "{token}");
        let body: Value = bad.json().await.unwrap();
        let said = body["error"].as_str().unwrap().to_owned();
        assert!(said.contains("clarify token create --user NAME"), "{said}");
        said
    };
    assert!(
        refused("clk_pat_nope")
            .await
            .contains("unknown, revoked or expired")
    );
    for garbage in ["", "   ", "hunter2", "Bearer clk_pat_x"] {
        assert!(
            refused(garbage).await.contains("not an access token"),
            "{garbage:?}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn revoked_and_expired_tokens_are_refused_and_none_is_stored_in_clear() {
    let server = auth_server().await;
    let token = server.token("alice").await;
    assert_eq!(server.as_token(&token).get("/workspaces").await.0, 200);

    let (id,): (String,) = sqlx::query_as("SELECT id FROM access_tokens")
        .fetch_one(server.db().pool())
        .await
        .unwrap();
    let now = clarify_server::clock::now_micros();
    server
        .db()
        .write(async |c| clarify_server::db::users::revoke_token(c, &id, now).await)
        .await
        .unwrap();
    assert_eq!(server.as_token(&token).get("/workspaces").await.0, 401);

    let (expiring, _) = clarify_server::auth::tokens::create(server.db(), "bob", Some(1))
        .await
        .unwrap();
    assert_eq!(server.as_token(&expiring).get("/workspaces").await.0, 200);
    server
        .db()
        .write(async |c| {
            sqlx::query("UPDATE access_tokens SET expires_at = 1 WHERE revoked_at IS NULL")
                .execute(c)
                .await
        })
        .await
        .unwrap();
    assert_eq!(server.as_token(&expiring).get("/workspaces").await.0, 401);

    // Not a byte of the database files (main file and write-ahead log)
    // holds a token, an agent token or a cookie secret in clear.
    let carol = server.token("carol").await;
    let (_, _, agent) = server.as_token(&carol).session(None).await;
    let cookie = server.login(&carol).await;
    let cookie_secret = cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned();
    let bytes = stored_bytes(&server).await;
    for secret in [&token, &expiring, &carol, &agent, &cookie_secret] {
        let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found, "a secret is stored in clear: {secret:.12}…");
    }
    server.stop().await;
}

#[tokio::test]
async fn cors_allows_credentials_for_the_configured_origin_only() {
    let server = TestServer::start_with(Config {
        auth: true,
        cors_origin: Some("http://localhost:3000".into()),
        ..Config::default()
    })
    .await;
    let preflight = |origin: &'static str| {
        server
            .client()
            .request(
                reqwest::Method::OPTIONS,
                server.url("/api/v1/clarification/x/respond"),
            )
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .send()
    };
    let allowed = preflight("http://localhost:3000").await.unwrap();
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
    assert_eq!(
        allowed.headers()["access-control-allow-credentials"],
        "true"
    );
    let other = preflight("http://evil.example").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
    server.stop().await;
}

/// Everything the database holds: on SQLite the bytes of its files (main
/// file and write-ahead log); on PostgreSQL, whose files live with the
/// server, every row of every table as text.
async fn stored_bytes(server: &TestServer) -> Vec<u8> {
    let mut bytes = Vec::new();
    if clarify_tests::testing_postgres() {
        for table in clarify_server::db::table_names(server.db()).await.unwrap() {
            let rows: Vec<(String,)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT CAST(t AS TEXT) FROM {table} t"
            )))
            .fetch_all(server.db().pool())
            .await
            .unwrap();
            for (row,) in rows {
                bytes.extend(row.into_bytes());
            }
        }
    } else {
        for entry in std::fs::read_dir(server.database().dir()).unwrap() {
            bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
    }
    assert!(bytes.len() > 1_000, "read the stored data");
    bytes
}
