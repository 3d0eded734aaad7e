//! Telegram long polling (issue 48 item 1): a bot with no webhook secret,
//! on a server listening on 127.0.0.1 that Telegram could never call,
//! fetches its updates with `getUpdates` from a local stand-in of the Bot
//! API (tests/src/telegram_fake.rs) and answers them through the one
//! claim; a webhook set on the bot is removed first; the offset survives a
//! restart, so an update queued while the server was down is handled once
//! and none twice.

use std::time::Duration;

use clarify_server::{Config, Secret};
use clarify_tests::{ChatApis, Receiver, TELEGRAM_TOKEN, TestServer};
use serde_json::{Value, json};

/// A bot with a chat and no webhook secret: it polls.
fn polling(apis: &ChatApis) -> Config {
    Config {
        telegram_bot_token: Some(Secret(TELEGRAM_TOKEN.into())),
        telegram_chat_id: Some("-100".into()),
        telegram_api_url: Some(apis.telegram_api()),
        notify_first_retry: Some(Duration::from_millis(300)),
        channel_lease: Some(Duration::from_secs(1)),
        ..Config::default()
    }
}

fn one_question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "Postgres"}, {"label": "SQLite"}]}])
}

/// The Telegram message naming `prompt`: its buttons' data and its id.
async fn telegram_message(apis: &ChatApis, prompt: &str) -> (Vec<String>, u64) {
    let sent = apis
        .wait_for("sendMessage", |b| {
            b["text"].as_str().is_some_and(|t| t.contains(prompt))
        })
        .await;
    let data = sent.body["reply_markup"]["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row[0]["callback_data"].as_str().map(str::to_owned))
        .collect();
    (data, sent.id)
}

/// The line the bot answered callback query `query` with.
async fn told(apis: &ChatApis, query: &str) -> String {
    let told = apis
        .wait_for("answerCallbackQuery", |b| b["callback_query_id"] == query)
        .await;
    told.body["text"].as_str().unwrap().to_owned()
}

/// How many times callback query `query` was answered.
fn answered_times(apis: &ChatApis, query: &str) -> usize {
    apis.calls("answerCallbackQuery")
        .iter()
        .filter(|c| c.body["callback_query_id"] == query)
        .count()
}

/// The update id of the press whose callback query is `query`.
fn update_of(query: &str) -> i64 {
    query.trim_start_matches('q').parse().unwrap()
}

async fn view(server: &TestServer, pending: &str) -> Value {
    server.get(&format!("/clarification/{pending}")).await.1
}

async fn attempts(server: &TestServer, pending: &str) -> usize {
    let (_, log) = server
        .get(&format!("/clarification/{pending}/attempts"))
        .await;
    log["attempts"].as_array().unwrap().len()
}

/// Waits until the server has kept message `id` of the chat (it learns the
/// id from the API's answer, just after the fake recorded the call).
async fn kept(server: &TestServer, id: u64) {
    let known = async {
        loop {
            let found = clarify_server::db::chat_messages::pending_of(
                server.db().pool(),
                "telegram:-100",
                &id.to_string(),
            )
            .await
            .unwrap();
            if found.is_some() {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), known)
        .await
        .expect("the message's id is kept");
}

/// Issue 48 item 1: with no webhook secret (and so no webhook route) and no
/// way in, a press is fetched by a long `getUpdates` and answered through
/// the claim; the message is updated to the winner.
#[tokio::test]
async fn a_press_is_answered_by_polling_with_no_webhook_secret() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    let (status, _) = server
        .post("/integrations/telegram/webhook", &json!({"update_id": 1}))
        .await;
    assert_eq!(status, 404, "no webhook route without its secret");
    let (pending, _, _) = server
        .ask_expiring(one_question("Polled pick?"), None)
        .await;
    let (data, message_id) = telegram_message(&apis, "Polled pick?").await;
    let query = apis.telegram_press(&data[1], "bob");

    assert_eq!(told(&apis, &query).await, "Answered: SQLite");
    let answered = view(&server, &pending).await;
    assert_eq!(
        answered["answered_by"],
        json!({"user": "bob", "channel": "telegram", "client": ""})
    );
    let edit = apis
        .wait_for("editMessageText", |b| b["message_id"] == message_id)
        .await;
    assert!(
        edit.body["text"]
            .as_str()
            .unwrap()
            .starts_with("Answered by bob in Telegram: SQLite"),
        "{}",
        edit.body
    );
    let poll = &apis.calls("getUpdates")[0].body;
    assert_eq!(poll["timeout"], 50, "a long poll: {poll}");
    assert_eq!(
        poll["allowed_updates"],
        json!(["message", "callback_query"])
    );
    assert_eq!(apis.telegram_conflicts(), 0, "one poller");
    let health = server.channels().await;
    assert_eq!(
        health["telegram"],
        json!({"state": "connected", "mode": "polling", "down": false}),
        "issue 48 item 4: {health}"
    );
    server.stop().await;
}

/// Issue 48 item 1: a webhook set by someone else while the bot polls ends
/// the long poll with 409; the poller backs off, removes the webhook again
/// and goes on, and a press is still answered.
#[tokio::test]
async fn a_409_while_polling_backs_off_and_polling_resumes() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    apis.wait_for("getUpdates", |_| true).await;
    apis.set_telegram_webhook("https://someone.example/hook");
    let removed = apis.wait_for("deleteWebhook", |_| true).await;
    assert_eq!(removed.body["drop_pending_updates"], false);
    assert!(apis.telegram_conflicts() >= 1, "the poll was refused 409");

    let (pending, _, _) = server
        .ask_expiring(one_question("After the conflict?"), None)
        .await;
    let (data, _) = telegram_message(&apis, "After the conflict?").await;
    let query = apis.telegram_press(&data[0], "gina");
    assert_eq!(told(&apis, &query).await, "Answered: Postgres");
    assert_eq!(view(&server, &pending).await["answered_by"]["user"], "gina");
    assert_eq!(apis.telegram_webhook(), "");
    server.stop().await;
}

/// Issue 48 item 1: a reply to the bot's message answers a one-question
/// bundle with its text, fetched like a press.
#[tokio::test]
async fn a_polled_reply_answers_a_one_question_bundle() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Reply by polling?"), None)
        .await;
    let (_, message_id) = telegram_message(&apis, "Reply by polling?").await;
    kept(&server, message_id).await;
    let reply = apis.telegram_reply(-100, message_id, "carol", "MySQL, really");
    let confirm = apis
        .wait_for("sendMessage", |b| {
            b["reply_parameters"]["message_id"] == 90_000 + reply
        })
        .await;
    assert_eq!(confirm.body["text"], "Answered: “MySQL, really”");
    let replied = view(&server, &pending).await;
    assert_eq!(
        replied["response"]["answers"][0]["custom_text"],
        "MySQL, really"
    );
    assert_eq!(replied["answered_by"]["user"], "carol");
    server.stop().await;
}

/// Issue 48 item 1: Telegram refuses `getUpdates` while a webhook is set
/// (409), so a webhook found on the bot is removed first, keeping its
/// pending updates: a press queued for the webhook is answered by polling.
#[tokio::test]
async fn a_webhook_set_on_the_bot_is_removed_before_polling() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Hooked pick?"), None)
        .await;
    let (data, _) = telegram_message(&apis, "Hooked pick?").await;
    let mut query = String::new();
    let server = server
        .restart_after(async {
            apis.set_telegram_webhook("https://old.example/telegram/hook");
            query = apis.telegram_press(&data[0], "dave");
        })
        .await;
    assert_eq!(told(&apis, &query).await, "Answered: Postgres");
    assert_eq!(view(&server, &pending).await["answered_by"]["user"], "dave");
    assert_eq!(apis.telegram_webhook(), "", "the webhook was removed");
    let removed = apis.calls("deleteWebhook");
    assert_eq!(removed.len(), 1);
    assert_eq!(
        removed[0].body["drop_pending_updates"], false,
        "its pending updates are kept"
    );
    assert_eq!(apis.telegram_conflicts(), 0, "removed before polling");
    server.stop().await;
}

/// Issue 48 item 1: the offset is kept with the lease, so after a restart
/// the first `getUpdates` asks past the last update handled: a press
/// queued while the server was down is answered once, and the one handled
/// before the restart is not handled again.
#[tokio::test]
async fn the_offset_is_kept_across_a_restart() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    let (first, _, _) = server
        .ask_expiring(one_question("Before the restart?"), None)
        .await;
    let (second, _, _) = server
        .ask_expiring(one_question("During the restart?"), None)
        .await;
    let (first_data, _) = telegram_message(&apis, "Before the restart?").await;
    let (second_data, _) = telegram_message(&apis, "During the restart?").await;
    let before = apis.telegram_press(&first_data[0], "erin");
    assert_eq!(told(&apis, &before).await, "Answered: Postgres");

    let mut during = String::new();
    let mut polls_before = 0;
    let server = server
        .restart_after(async {
            polls_before = apis.calls("getUpdates").len();
            during = apis.telegram_press(&second_data[1], "frank");
            // Telegram keeps both: the first is confirmed only by a poll
            // asking past it, and none came since.
            assert_eq!(apis.telegram_unconfirmed(), 2);
        })
        .await;

    assert_eq!(told(&apis, &during).await, "Answered: SQLite");
    let after = apis.calls("getUpdates");
    assert_eq!(
        after[polls_before].body["offset"],
        update_of(&before) + 1,
        "the restarted server asks past the update it handled"
    );
    assert_eq!(answered_times(&apis, &before), 1, "not handled twice");
    assert_eq!(answered_times(&apis, &during), 1);
    assert_eq!(view(&server, &first).await["answered_by"]["user"], "erin");
    assert_eq!(view(&server, &second).await["answered_by"]["user"], "frank");
    assert_eq!(attempts(&server, &first).await, 1, "one press, one attempt");
    assert_eq!(attempts(&server, &second).await, 1);
    server.stop().await;
}

/// Issue 48 item 1: a press the claim takes back (the agent's resume
/// webhook refused the answer) is passed, not fetched forever: the presser
/// is told why, the question stays open, and the next poll asks past it.
#[tokio::test]
async fn a_press_whose_answer_cannot_reach_the_agent_is_told_and_passed() {
    let apis = ChatApis::start().await;
    let receiver = Receiver::start().await;
    let server = TestServer::start_with(polling(&apis)).await;
    let (_, session, agent) = server
        .session(Some(json!({"webhook_url": receiver.refusing_url()})))
        .await;
    let pending = server
        .ask(&session, &agent, one_question("Undeliverable?"))
        .await;
    let (data, _) = telegram_message(&apis, "Undeliverable?").await;
    let refused = apis.telegram_press(&data[0], "jo");
    assert_eq!(
        told(&apis, &refused).await,
        "the answer could not be delivered to the agent; the question is still open"
    );
    assert_eq!(view(&server, &pending).await["status"], "pending");
    apis.wait_for("getUpdates", |b| b["offset"] == update_of(&refused) + 1)
        .await;
    server.stop().await;
}
