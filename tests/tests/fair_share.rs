//! Fair share (issue 26): no token holder, slow webhook or open socket can
//! stall anyone else. Each test is one of the reproductions,
//! through the real server: a real refusing or hanging receiver, real
//! sockets.

use std::time::{Duration, Instant};

use clarify_core::api;
use clarify_server::Config;
use clarify_server::{channels, lifecycle};
use clarify_tests::{NoticeSink, Receiver, TestServer};
use serde_json::{Value, json};

fn questions(default: Option<&str>) -> Value {
    let mut question = json!({"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]});
    if let Some(default) = default {
        question["default_option_id"] = json!(default);
    }
    json!([question])
}

/// A new session resumed through `webhook_url` asks `questions`, expiring
/// after a second, and detaches; returns the pending id.
async fn detached_expiring(server: &TestServer, webhook_url: String, questions: Value) -> String {
    let (_, session, agent) = server
        .session(Some(json!({"webhook_url": webhook_url})))
        .await;
    let (status, asked) = server
        .as_token(&agent)
        .post(
            "/clarification/request",
            &json!({"session_id": session, "questions": questions, "expires_in_seconds": 1}),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    let pending = asked["pending_id"].as_str().unwrap().to_owned();
    let (status, body) = server
        .as_token(&agent)
        .post(&format!("/clarification/{pending}/detach"), &json!({}))
        .await;
    assert!(status < 300, "detached: {body}");
    pending
}

/// A server telling a real sink of every change (`--notify-webhook`).
async fn notified() -> (NoticeSink, TestServer) {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(Config {
        notify_webhooks: vec![sink.url()],
        ..Config::default()
    })
    .await;
    (sink, server)
}

/// Waits (at most `limit`) until `done`; panics saying `what` otherwise.
/// Returns once `sink` accepted `pending`'s `waiting` notice, within `limit`.
async fn waiting_notice(sink: &NoticeSink, pending: &str, limit: Duration) {
    sink.wait_until(limit, |all| {
        all.iter()
            .any(|d| d.accepted && d.key == format!("{pending}:waiting"))
    })
    .await;
}

async fn until(limit: Duration, what: &str, done: impl Fn() -> bool) {
    let waited = tokio::time::timeout(limit, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "not within {limit:?}: {what}");
}

/// Alice's question, expiring after 2 s, and how long until her waiting
/// agent was told it expired.
async fn alices_expiry(server: &TestServer) -> Duration {
    let (pending, _, agent) = server.ask_expiring(questions(None), Some(2)).await;
    let asked = Instant::now();
    let (status, body) = server
        .as_token(&agent)
        .get(&format!("/clarification/{pending}/wait?timeout=30"))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "expired", "{body}");
    asked.elapsed()
}

/// Issue 26 item 1: Bob's bundle, whose defaults his resume target
/// refuses each second, used to end every expiry pass (Alice's 2 s
/// question was still pending after 15 s). Now it fails alone, and stays
/// open to be tried again: the defaults are not lost.
#[tokio::test]
async fn a_bundle_whose_defaults_are_refused_stops_nobody_elses_expiry() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    let bobs =
        detached_expiring(&server, receiver.refusing_url(), questions(Some("q1_opt1"))).await;
    let took = alices_expiry(&server).await;
    assert!(
        took < Duration::from_secs(6),
        "Alice's question expired after {took:?}"
    );
    // Bob's is open again between tries (R7a), never expired in the
    // meantime nor answered without its agent being told.
    let mut status = Value::Null;
    for _ in 0..50 {
        let (_, view) = server.get(&format!("/clarification/{bobs}")).await;
        status = view["status"].clone();
        if status == "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "pending", "Bob's bundle stays open for another try");
    server.stop().await;
}

/// Issue 26 item 2: four detached bundles whose resume webhook never
/// answers used to be resumed one after another inside the sweep (an
/// unrelated 2 s question expired after 39 s). Now each is its own task:
/// all four reach the webhook at once, and Alice's expires on time.
#[tokio::test]
async fn slow_resume_webhooks_delay_nobody_elses_expiry() {
    let server = TestServer::start().await;
    let receiver = Receiver::start().await;
    for _ in 0..4 {
        detached_expiring(&server, receiver.hanging_url(), questions(None)).await;
    }
    let took = alices_expiry(&server).await;
    assert!(
        took < Duration::from_secs(6),
        "Alice's question expired after {took:?}"
    );
    until(
        Duration::from_secs(5),
        "the four resumes sent side by side, not one per 10 s timeout",
        || receiver.hanging_count() >= 4,
    )
    .await;
    server.stop().await;
}

/// Issue 26 item 3: a workspace webhook that never answers and 48
/// questions in that workspace used to hold all 16 send permits, so the
/// operator's `--notify-webhook` heard of the next question 26.6 s late.
/// Now the slow target holds at most its own two places.
#[tokio::test]
async fn a_slow_workspace_webhook_delays_nobody_elses_notices() {
    let (sink, server) = notified().await;
    let slow = Receiver::start().await;
    let (_, workspace) = server.post("/workspaces", &json!({"name": "slow"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let (status, body) = server
        .api()
        .put(
            &format!("/workspaces/{workspace}/notify"),
            &json!({"webhook_url": slow.hanging_url()}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    for _ in 0..48 {
        let (_, session, agent) = server.api().session_in(&workspace, None).await;
        server.ask(&session, &agent, questions(None)).await;
    }
    until(
        Duration::from_secs(5),
        "the slow target got its sends",
        || slow.hanging_count() >= channels::PER_TARGET,
    )
    .await;

    let (_, session, agent) = server.session(None).await;
    let asked = Instant::now();
    let pending = server.ask(&session, &agent, questions(None)).await;
    waiting_notice(&sink, &pending, Duration::from_secs(2)).await;
    let took = asked.elapsed();
    assert_eq!(
        slow.hanging_count(),
        channels::PER_TARGET,
        "the slow target holds its own places only ({took:?})"
    );
    server.stop().await;
}

/// Issue 26 item 7: with `/bin/sleep` allowed, 15 answers left 15 children
/// running at once. Now at most `--resume-command-concurrency` run; the
/// rest wait their turn and none is dropped.
#[tokio::test]
async fn resume_commands_run_a_few_at_a_time_and_none_is_dropped() {
    let server = TestServer::start_with(Config {
        allowed_resume_commands: vec!["/bin/sh".into()],
        resume_command_concurrency: Some(2),
        ..Config::default()
    })
    .await;
    let log = std::env::temp_dir().join(format!(
        "clarify-fair-commands-{}",
        clarify_server::ids::new_id()
    ));
    // Each run writes "s" as it starts and "e" as it ends.
    let script = "echo s >> \"$0\"; sleep 0.5; echo e >> \"$0\"";
    let mut pending = Vec::new();
    for _ in 0..6 {
        let command = json!(["/bin/sh", "-c", script, log]);
        let (_, session, agent) = server.session(Some(json!({"command": command}))).await;
        pending.push(server.ask(&session, &agent, questions(None)).await);
    }
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    for id in &pending {
        let (status, won) = server.respond(id, &pick).await;
        assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    }
    let lines = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    until(
        Duration::from_secs(20),
        "all six commands ran to their end",
        || lines().len() >= 12,
    )
    .await;
    let mut running = 0_i32;
    let mut most = 0;
    for line in lines() {
        running += if line == "s" { 1 } else { -1 };
        most = most.max(running);
    }
    assert_eq!(most, 2, "two ran side by side, never more: {:?}", lines());
    let _ = std::fs::remove_file(&log);
    server.stop().await;
}

/// Issue 26 item 9: a prompt holding `<https://evil.example|click here>`
/// or `<!channel>` used to reach a Slack or Mattermost webhook's `text`
/// unchanged: a disguised link, a ping to the whole channel. Now what the
/// agent wrote is escaped there, and kept as written in `questions`.
#[tokio::test]
async fn notices_escape_what_agents_write_for_chat_apps() {
    let (sink, server) = notified().await;
    let prompt = "<https://evil.example|click here> & <!channel>";
    let api = server.api();
    let task = api
        .create_task(&api::NewTask {
            title: "R&D <!here>".into(),
            workspace_id: None,
            description: None,
            project: None,
        })
        .await;
    let made = api
        .create_session(&task.task.id, &api::NewSession::default())
        .await;
    let (session, agent) = (made.session.id, made.agent_token);
    let questions = json!([{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no"}]}]);
    let pending = server.ask(&session, &agent, questions).await;
    let notice = sink.accepted(&format!("{pending}:waiting")).await;
    let text = notice["text"].as_str().unwrap();
    assert!(
        text.contains("“R&amp;D &lt;!here&gt;”: &lt;https://evil.example|click here&gt; &amp; &lt;!channel&gt;"),
        "{text}"
    );
    assert!(!text.contains('<') && !text.contains('>'), "{text}");
    assert_eq!(notice["questions"], json!([prompt]), "as written elsewhere");
    assert_eq!(notice["task"], "R&D <!here>");
    server.stop().await;
}

/// Issue 26 item 4: 1,500 idle connections and 200 slow-drip ones were all
/// still open after 50 s, and under `ulimit -n 512` `/healthz` timed out
/// ("accept error: Too many open files"). Now, with the file limit at
/// 1,024 and 2,000 such sockets opened against it, a normal request on a
/// new connection is answered within 2 s, and every one of those sockets
/// is closed within the header timeout (10 s) and a margin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_slow_drip_connections_cannot_keep_a_client_out() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let files = clarify_server::serve::raise_file_limit();
    let sockets = usize::try_from(files.saturating_sub(256))
        .unwrap_or(2000)
        .min(2000);
    let server = clarify_tests::process::ServerProcess::start(
        env!("CARGO_BIN_EXE_clarify-under-test"),
        "prlimit --nofile=1024:1024",
    );
    let addr = server.url.trim_start_matches("http://").to_owned();
    let opened = Instant::now();
    let mut held = Vec::new();
    for n in 0..sockets {
        let mut tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        if n % 8 == 0 {
            // Slow drip: a request line, then a header byte now and then.
            tcp.write_all(b"GET /healthz HTTP/1.1\r\nX").await.unwrap();
        }
        held.push(tcp);
    }
    let started = Instant::now();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let answered = client
        .get(format!("{}/healthz", server.url))
        .send()
        .await
        .expect("answered within 2 s");
    assert_eq!(answered.status(), 200);
    let took = started.elapsed();
    // Every held socket is closed by the server: at once (no place left)
    // or when its headers' time is up.
    let drips = held.iter_mut().enumerate().map(|(n, tcp)| async move {
        let mut byte = [0_u8; 256];
        loop {
            let read = tokio::time::timeout(Duration::from_millis(500), tcp.read(&mut byte)).await;
            match read {
                Ok(Ok(0) | Err(_)) => return true,
                Ok(Ok(_)) => {}
                Err(_) if n % 8 == 0 => {
                    // Still dripping: one more byte of a header.
                    if tcp.write_all(b"x").await.is_err() {
                        return true;
                    }
                }
                Err(_) => {}
            }
            if opened.elapsed() > Duration::from_secs(15) {
                return false;
            }
        }
    });
    let closed = futures_util::future::join_all(drips).await;
    let still_open = closed.iter().filter(|c| !**c).count();
    assert_eq!(still_open, 0, "of {sockets}, still open after 15 s");
    assert!(took < Duration::from_secs(2), "{took:?}");
    server.stop();
}

/// Issue 26 item 10: an unowned workspace's webhook URL (a Slack webhook's
/// URL is its secret) was readable by every user, who could also replace
/// it. Now it is the operator's, set with `clarify workspace notify`;
/// users see only its host.
#[tokio::test]
async fn an_unowned_workspaces_webhook_is_the_operators() {
    let server = TestServer::start_with(Config {
        auth: true,
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::default()
    })
    .await;
    let workspace = clarify_server::ids::new_id();
    let shared = clarify_server::db::workspaces::Workspace {
        id: workspace.clone(),
        name: "shared".into(),
        owner_id: String::new(),
        created_at: 1,
    };
    server
        .db()
        .write(async |c| clarify_server::db::workspaces::insert(c, &shared).await)
        .await
        .unwrap();
    let secret = "https://hooks.example.com/services/T000/B000/XXXXSECRET";
    let set = tokio::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args(["workspace", "notify", &workspace, secret, "--database-url"])
        .arg(server.database().url())
        .output()
        .await
        .unwrap();
    assert!(set.status.success(), "{set:?}");
    assert!(
        !String::from_utf8_lossy(&set.stdout).contains("SECRET"),
        "never echoed: {set:?}"
    );
    let alice = server.token("alice").await;
    let path = format!("/workspaces/{workspace}/notify");
    let (status, body) = server.as_token(&alice).get(&path).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["webhook_url"], "https://hooks.example.com/…", "{body}");
    let (status, body) = server
        .as_token(&alice)
        .put(&path, &json!({"webhook_url": "http://127.0.0.1:9/mine"}))
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("clarify workspace notify"),
        "{body}"
    );
    let (stored,): (String,) =
        sqlx::query_as("SELECT webhook_url FROM workspace_notify WHERE workspace_id = $1")
            .bind(&workspace)
            .fetch_one(server.db().pool())
            .await
            .unwrap();
    assert_eq!(stored, secret, "unchanged");
    server.stop().await;
}

/// Issue 26 item 6: a task `description` of 1.9 MB was accepted (twenty:
/// +40 MB, and a shared task list of 38 MB). Now 64 Ki characters at most:
/// beyond, 400 naming the field and its limit, and nothing is created.
#[tokio::test]
async fn a_task_description_has_a_bound_and_beyond_it_nothing_is_made() {
    let server = TestServer::start().await;
    let most = "é".repeat(clarify_core::MAX_DESCRIPTION);
    let (status, body) = server
        .post(
            "/tasks",
            &json!({"title": "t", "description": format!("{most}x")}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"],
        "description: is longer than 65536 characters"
    );
    let (_, listed) = server.get("/tasks").await;
    assert_eq!(listed["tasks"], json!([]), "nothing was created: {listed}");
    let (status, body) = server
        .post("/tasks", &json!({"title": "t", "description": most}))
        .await;
    assert_eq!(status, 201, "at the bound: {body}");
    server.stop().await;
}

/// Issue 26 item 6: the attempts log grew without bound (30 losing
/// answers with a 900 KB client name added 24.9 MB, and one GET returned
/// 27 MB). Now a bundle keeps the winner and the first 100 losing
/// attempts; the rest are counted in `more`.
#[tokio::test]
async fn the_attempts_log_keeps_a_hundred_and_counts_the_rest() {
    let server = TestServer::start().await;
    let (pending, _, _) = server.ask_expiring(questions(None), None).await;
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    let (status, won) = server.respond(&pending, &pick).await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    for _ in 0..105 {
        let (status, lost) = server.respond(&pending, &pick).await;
        assert_eq!((status, &lost["claimed"]), (200, &json!(false)), "{lost}");
    }
    let (status, log) = server
        .get(&format!("/clarification/{pending}/attempts?limit=200"))
        .await;
    assert_eq!(status, 200, "{log}");
    let attempts = log["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 101, "the winner and a hundred after it");
    assert_eq!(attempts[0]["outcome"], "won");
    assert_eq!(log["more"], 5, "{}", log["more"]);
    server.stop().await;
}

/// Issue 45 item 7-P5: workspaces' notices shared one pool of 64 sends, so
/// 32 never-answering webhooks of one owner (two sends each) delayed every
/// other owner's notices by up to 10 s. Now each owner sends within a
/// share: Bob's notice arrives promptly while Alice's still hang.
#[tokio::test]
async fn one_owners_hanging_webhooks_delay_no_other_owners_notices() {
    let server = TestServer::start_with(Config {
        auth: true,
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ask_limits: lifecycle::AskLimits {
            burst: 1000,
            ..lifecycle::AskLimits::default()
        },
        ..Config::default()
    })
    .await;
    let slow = Receiver::start().await;
    let alice = server.token("alice").await;
    let owner = server.as_token(&alice);
    for n in 0..32 {
        let (_, workspace) = owner
            .post("/workspaces", &json!({"name": format!("w{n}")}))
            .await;
        let workspace = workspace["id"].as_str().unwrap().to_owned();
        let hook = json!({"webhook_url": format!("{}?w={n}", slow.hanging_url())});
        let (status, body) = owner
            .put(&format!("/workspaces/{workspace}/notify"), &hook)
            .await;
        assert_eq!(status, 200, "{body}");
        let (_, session, agent) = owner.session_in(&workspace, None).await;
        for prompt in ["One?", "Two?"] {
            let question = json!([{"prompt": prompt, "options": [{"label": "a"}, {"label": "b"}]}]);
            server.as_token(&agent).ask(&session, question).await;
        }
    }
    until(
        Duration::from_secs(5),
        "alice's webhooks got their share",
        || slow.hanging_count() >= channels::PER_OWNER,
    )
    .await;

    let sink = NoticeSink::start(0).await;
    let bob = server.token("bob").await;
    let (_, workspace) = server
        .as_token(&bob)
        .post("/workspaces", &json!({"name": "bob's"}))
        .await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let (status, body) = server
        .as_token(&bob)
        .put(
            &format!("/workspaces/{workspace}/notify"),
            &json!({"webhook_url": sink.url()}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (_, session, agent) = server.as_token(&bob).session_in(&workspace, None).await;
    let asked = Instant::now();
    let pending = server.as_token(&agent).ask(&session, questions(None)).await;
    waiting_notice(&sink, &pending, Duration::from_secs(1)).await;
    let took = asked.elapsed();
    assert_eq!(
        slow.hanging_count(),
        channels::PER_OWNER,
        "alice's still hang, within her share ({took:?})"
    );
    server.stop().await;
}
