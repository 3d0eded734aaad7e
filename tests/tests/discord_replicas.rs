//! Discord's one gateway session per bot across replicas on one
//! PostgreSQL database (issue 48 item 2): the holder of the `discord`
//! lease is killed (SIGKILL: nothing released) with a press queued at
//! Discord; the other replica takes the lease over when it runs out,
//! resumes the session the lease kept, and the press Discord replays is
//! answered once.
//!
//! Ignored unless the run tests PostgreSQL: `scripts/test` runs it with
//! `--include-ignored` against its throw-away cluster.

use std::time::Duration;

use clarify_tests::process::{ServerProcess, post_json};
use clarify_tests::{DISCORD_SESSION, DISCORD_TOKEN, DiscordFake, TestDatabase, testing_postgres};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

/// Asks one question through the server at `url`; its pending id.
async fn ask(http: &reqwest::Client, url: &str, prompt: &str) -> String {
    let task = post_json(http, url, "/tasks", None, &json!({"title": "gateway"})).await;
    let path = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    let session = post_json(http, url, &path, None, &json!({})).await;
    let body = json!({"session_id": session["id"], "questions": [{"prompt": prompt,
        "options": [{"label": "Postgres"}, {"label": "SQLite"}]}]});
    let token = session["agent_token"].as_str().unwrap();
    let asked = post_json(http, url, "/clarification/request", Some(token), &body).await;
    asked["pending_id"].as_str().expect("pending_id").to_owned()
}

/// Issue 48 item 2: the gateway's holder killed with a press queued; the
/// other replica takes the session over and the press is answered once.
#[tokio::test]
#[ignore = "needs PostgreSQL"]
async fn the_gateways_holder_killed_with_a_press_queued_is_taken_over_and_answered_once() {
    assert!(testing_postgres(), "set CLARIFY_TEST_POSTGRES_URL");
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let database = TestDatabase::create().await;
    let api = fake.api_url();
    let flags = [
        "--discord-bot-token",
        DISCORD_TOKEN,
        "--discord-channel",
        "4242",
        "--discord-api-url",
        &api,
    ];
    let holder = ServerProcess::start_on(BINARY, database.url(), &flags);
    // READY kept as the lease's cursor: a heartbeat after it carries its
    // sequence number.
    fake.wait_for("gateway", "gateway /gateway", |b| {
        b["op"] == 1 && b["d"].as_u64().is_some_and(|s| s >= 1)
    })
    .await;
    let standby = ServerProcess::start_on(BINARY, database.url(), &flags);
    let http = reqwest::Client::new();
    let pending = ask(&http, &standby.url, "Survive a crash?").await;
    let post = fake
        .wait_for("POST", "/channels/4242/messages", |b| {
            b["content"]
                .as_str()
                .is_some_and(|c| c.contains("Survive a crash?"))
        })
        .await;
    let button = post.body["components"][0]["components"][1]["custom_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let content = post.body["content"].as_str().unwrap().to_owned();
    assert_eq!(fake.connections(), 1, "one session per bot");

    holder.kill();
    let callback = fake.press("erin", &button, &format!("{}", 900 + post.id), &content);
    let resume = fake
        .wait_for("gateway", "gateway /resume", |b| b["op"] == 6)
        .await;
    assert_eq!(resume.body["d"]["session_id"], DISCORD_SESSION);
    let told = fake.wait_for("POST", &callback, |_| true).await;
    assert_eq!(told.body["type"], 7, "{:?}", told.body);
    let view: Value = http
        .get(format!("{}/api/v1/clarification/{pending}", standby.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        view["answered_by"],
        json!({"user": "erin", "channel": "discord", "client": ""}),
        "{view}"
    );
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    let identifies = fake
        .calls("gateway", "gateway /")
        .iter()
        .filter(|c| c.body["op"] == 2)
        .count();
    assert_eq!(identifies, 1, "resumed, not identified again");
    assert_eq!(fake.calls("POST", &callback).len(), 1, "answered once");
    standby.stop();
}
