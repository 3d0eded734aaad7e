//! The binary as a process: R6 across `kill -9` and restart on the same
//! database, and the `clarify token` commands with `--auth`.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

use clarify_tests::{Receiver, TestDatabase};
use serde_json::{Value, json};

/// A `clarify serve` process on 127.0.0.1:0.
struct Process {
    child: Child,
    base: String,
    client: reqwest::Client,
}

impl Process {
    /// Starts the binary and reads the URL it prints once it is listening
    /// (it prints only after the database is open).
    fn start(database: &TestDatabase) -> Self {
        Self::start_with(database, &[])
    }

    fn start_with(database: &TestDatabase, extra: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
            .args(["serve", "--listen", "127.0.0.1:0", "--database-url"])
            .arg(database.url())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start clarify");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let said = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"));
        // Issue 46 item 11: the line says when a token is needed.
        let auth = extra.contains(&"--auth");
        assert_eq!(said.ends_with(" (auth on)"), auth, "{line:?}");
        let base = said.split(' ').next().unwrap_or_default().to_owned();
        Self {
            child,
            base,
            client: reqwest::Client::new(),
        }
    }

    /// SIGKILL: no shutdown, no flush, nothing in memory survives.
    fn kill9(mut self) {
        self.child.kill().expect("kill -9");
        self.child.wait().expect("reap");
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, format!("{}/api/v1{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body), None)
            .await
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates a task and a session resumed through `webhook`, and asks one
/// question; returns the pending id.
async fn ask(server: &Process, webhook: &str) -> String {
    ask_and(server, webhook, false).await.0
}

/// [`ask`], by an agent that will poll for the answer when `attach`;
/// returns the pending id and the agent's token.
async fn ask_and(server: &Process, webhook: &str, attach: bool) -> (String, String) {
    let (_, task) = server.post("/tasks", &json!({"title": "restart"})).await;
    let task_id = task["id"].as_str().unwrap();
    let (_, session) = server
        .post(
            &format!("/tasks/{task_id}/sessions"),
            &json!({"resume": {"webhook_url": webhook}}),
        )
        .await;
    let body = json!({"session_id": session["id"], "attach": attach, "questions": [
        {"prompt": "Proceed?", "options": [{"label": "yes"}, {"label": "no"}]}
    ]});
    let (status, created) = server
        .call(
            reqwest::Method::POST,
            "/clarification/request",
            Some(&body),
            session["agent_token"].as_str(),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    (
        created["pending_id"].as_str().unwrap().to_owned(),
        session["agent_token"].as_str().unwrap().to_owned(),
    )
}

fn yes() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
}

#[tokio::test]
async fn r6_a_bundle_survives_kill_9_and_is_answered_exactly_once() {
    let database = TestDatabase::create().await;
    let receiver = Receiver::start().await;
    let first = Process::start(&database);
    let pending = ask(&first, &receiver.url()).await;
    first.kill9();

    let second = Process::start(&database);
    let (status, view) = second
        .call(
            reqwest::Method::GET,
            &format!("/clarification/{pending}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        view["active"], true,
        "a restart does not end the turn: {view}"
    );

    let (status, won) = second
        .post(&format!("/clarification/{pending}/respond"), &yes())
        .await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    let (status, lost) = second
        .post(
            &format!("/clarification/{pending}/respond"),
            &json!({"rejected": true}),
        )
        .await;
    assert_eq!((status, &lost["claimed"]), (200, &json!(false)), "{lost}");
    assert_eq!(lost["response"]["answers"], won["response"]["answers"]);
    assert_eq!(receiver.count(), 1, "one resume, not two");
}

#[tokio::test]
async fn r6_a_crash_during_the_resume_never_resumes_twice() {
    let database = TestDatabase::create().await;
    let receiver = Receiver::start().await;
    let first = Process::start(&database);
    let pending = ask(&first, &receiver.hanging_url()).await;

    // The answer is claimed and its resume is in flight when the server dies.
    let url = format!("{}/api/v1/clarification/{pending}/respond", first.base);
    let in_flight =
        tokio::spawn(async move { reqwest::Client::new().post(url).json(&yes()).send().await });
    receiver.wait_for_hanging().await;
    first.kill9();
    assert!(
        in_flight.await.unwrap().is_err(),
        "the caller never got a 200"
    );

    // Restart: the resume may have reached the agent, so the claim is kept
    // rather than reopened for a second answer and a second resume.
    let second = Process::start(&database);
    let (status, replay) = second
        .post(&format!("/clarification/{pending}/respond"), &yes())
        .await;
    assert_eq!(
        (status, &replay["claimed"]),
        (200, &json!(false)),
        "{replay}"
    );
    assert_eq!(
        replay["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1"])
    );
    assert_eq!(receiver.hanging_count(), 1);
    assert_eq!(receiver.count(), 0);
}

#[tokio::test]
#[ignore = "needs PostgreSQL"]
async fn a_replica_killed_mid_wait_leaves_the_bundle_answerable_through_the_survivor() {
    assert!(
        clarify_tests::testing_postgres(),
        "set CLARIFY_TEST_POSTGRES_URL"
    );
    let database = TestDatabase::create().await;
    let receiver = Receiver::start().await;
    let doomed = Process::start(&database);
    let survivor = Process::start(&database);
    let (pending, agent) = ask_and(&doomed, &receiver.url(), true).await;
    let wait_on = |base: &str| {
        let url = format!("{base}/api/v1/clarification/{pending}/wait?timeout=60");
        let agent = agent.clone();
        tokio::spawn(async move {
            reqwest::Client::new()
                .get(url)
                .bearer_auth(agent)
                .send()
                .await
        })
    };

    let blocked = wait_on(&doomed.base);
    doomed.kill9();
    assert!(
        blocked.await.unwrap().is_err(),
        "the long poll died with its replica"
    );

    // The agent polls again through the load balancer, reaching the survivor.
    let again = wait_on(&survivor.base);
    let (status, won) = survivor
        .post(&format!("/clarification/{pending}/respond"), &yes())
        .await;
    assert_eq!((status, &won["claimed"]), (200, &json!(true)), "{won}");
    let waited = again
        .await
        .unwrap()
        .expect("the survivor answered the poll");
    assert_eq!(waited.status(), 200);
    let waited: Value = waited.json().await.unwrap();
    assert_eq!(waited["response"]["answers"], won["response"]["answers"]);
    assert_eq!(
        receiver.count(),
        0,
        "the agent was still polling: answered live, not resumed"
    );
}

/// Runs `clarify token …` on `database`; returns its stdout lines.
fn token_command(database: &TestDatabase, args: &[&str]) -> (bool, Vec<String>) {
    let output = Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .arg("token")
        .args(args)
        .arg("--database-url")
        .arg(database.url())
        .output()
        .expect("run clarify token");
    let stdout = String::from_utf8(output.stdout).unwrap();
    (
        output.status.success(),
        stdout.lines().map(String::from).collect(),
    )
}

#[tokio::test]
async fn token_create_prints_the_token_last_and_revoke_ends_it() {
    let database = TestDatabase::create().await;
    let (ok, lines) = token_command(&database, &["create", "--user", "alice"]);
    assert!(ok, "{lines:?}");
    let token = lines.last().unwrap().clone();
    assert!(token.starts_with("clk_pat_"), "{lines:?}");
    let id = lines[0].split_whitespace().nth(2).unwrap().to_owned();

    let server = Process::start_with(&database, &["--auth"]);
    assert_eq!(
        server
            .call(reqwest::Method::GET, "/workspaces", None, None)
            .await
            .0,
        401
    );
    assert_eq!(
        server
            .call(reqwest::Method::GET, "/workspaces", None, Some(&token))
            .await
            .0,
        200
    );

    let (ok, listed) = token_command(&database, &["list", "--user", "alice"]);
    assert!(
        ok && listed[0].starts_with(&format!("{id} valid")),
        "{listed:?}"
    );
    let (ok, _) = token_command(&database, &["revoke", &id]);
    assert!(ok);
    assert_eq!(
        server
            .call(reqwest::Method::GET, "/workspaces", None, Some(&token))
            .await
            .0,
        401
    );
    let (ok, _) = token_command(&database, &["revoke", &id]);
    assert!(!ok, "revoking twice fails");
}

#[tokio::test]
async fn the_public_urls_host_is_answered_and_another_name_is_not() {
    let database = TestDatabase::create().await;
    let server = Process::start_with(&database, &["--public-url", "https://clarify.example"]);
    let at = |host: &'static str| {
        server
            .client
            .get(format!("{}/healthz", server.base))
            .header("host", host)
            .send()
    };
    assert_eq!(
        at("clarify.example").await.unwrap().status(),
        200,
        "Slack's callbacks come by it"
    );
    assert_eq!(at("rebind.evil").await.unwrap().status(), 403);
    server.kill9();
}
