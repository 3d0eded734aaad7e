//! Slack and Telegram (issue 28, items 3 and 4) against local fakes that
//! speak their documented APIs: a waiting bundle is posted with a button
//! per option; a press, signed by Slack or carrying Telegram's secret,
//! answers through the one claim as that chat's user; the message is then
//! updated to the winner; a late press is told the winner; forged, stale
//! and replayed callbacks change nothing.

use std::time::Duration;

use clarify_server::{Config, Secret};
use clarify_tests::{ChatApis, NoticeSink, SLACK_TOKEN, TELEGRAM_TOKEN, TestServer, slack_signed};
use serde_json::{Value, json};

const SLACK_SECRET: &str = "slack-signing-secret";
const TELEGRAM_SECRET: &str = "telegram-webhook-secret";

fn chats(apis: &ChatApis) -> Config {
    Config {
        slack_bot_token: Some(Secret(SLACK_TOKEN.into())),
        slack_signing_secret: Some(Secret(SLACK_SECRET.into())),
        slack_channel: Some("#ops".into()),
        slack_api_url: Some(apis.slack_api()),
        telegram_bot_token: Some(Secret(TELEGRAM_TOKEN.into())),
        telegram_chat_id: Some("-100".into()),
        telegram_webhook_secret: Some(Secret(TELEGRAM_SECRET.into())),
        telegram_api_url: Some(apis.telegram_api()),
        notify_first_retry: Some(Duration::from_millis(300)),
        ..Config::default()
    }
}

fn one_question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "Postgres"}, {"label": "SQLite"}]}])
}

fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// The Slack post whose text names `prompt`: its buttons' values and ts.
async fn slack_post(apis: &ChatApis, prompt: &str) -> (Vec<String>, String) {
    let post = apis
        .wait_for("chat.postMessage", |b| {
            b["blocks"][0]["text"]["text"]
                .as_str()
                .is_some_and(|t| t.contains(prompt))
        })
        .await;
    let values = post.body["blocks"][1]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["value"].as_str().map(str::to_owned))
        .collect();
    (values, format!("1700000000.{:06}", post.id))
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

/// Waits until the server has kept message `id` of `target` (it learns
/// the id from the API's answer, just after the fake recorded the call).
async fn kept(server: &TestServer, target: &str, id: u64) {
    let known = async {
        loop {
            let found = clarify_server::db::chat_messages::pending_of(
                server.db().pool(),
                target,
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

async fn slack_press(server: &TestServer, body: &(String, String, String)) -> u16 {
    reqwest::Client::new()
        .post(server.url("/api/v1/integrations/slack/interactions"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", &body.1)
        .header("x-slack-signature", &body.2)
        .body(body.0.clone())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn pressed(apis: &ChatApis, user: &str, value: &str) -> Value {
    json!({"type": "block_actions", "user": {"id": "U1", "username": user, "name": user},
        "actions": [{"action_id": "answer_0", "block_id": "clarify", "value": value, "type": "button"}],
        "response_url": apis.response_url(), "container": {"type": "message"}})
}

async fn telegram(server: &TestServer, secret: &str, update: &Value) -> u16 {
    reqwest::Client::new()
        .post(server.url("/api/v1/integrations/telegram/webhook"))
        .header("x-telegram-bot-api-secret-token", secret)
        .json(update)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

async fn view(server: &TestServer, pending: &str) -> Value {
    server.get(&format!("/clarification/{pending}")).await.1
}

/// Issue 45 item 7-P3: the replay key was the signature's text, so the same
/// press with its hex upper-cased (or its timestamp written `0…`), which
/// verifies as well, ran again (one more attempt logged, one more reply).
#[tokio::test]
async fn a_slack_press_replayed_with_its_signature_re_cased_is_refused() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(chats(&apis)).await;
    let (pending, _, _) = server.ask_expiring(one_question("Which db?"), None).await;
    let (values, _) = slack_post(&apis, "Which db?").await;
    let (body, at, signature) =
        slack_signed(SLACK_SECRET, now(), &pressed(&apis, "alice", &values[0]));
    assert_eq!(
        slack_press(&server, &(body.clone(), at.clone(), signature.clone())).await,
        200
    );
    let shouted = format!("v0={}", signature["v0=".len()..].to_uppercase());
    let replays = [
        (body.clone(), at.clone(), shouted),
        (body.clone(), format!("0{at}"), signature.clone()),
    ];
    for replay in &replays {
        assert_eq!(slack_press(&server, replay).await, 401, "{replay:?}");
    }
    let (_, log) = server
        .get(&format!("/clarification/{pending}/attempts"))
        .await;
    assert_eq!(
        log["attempts"].as_array().unwrap().len(),
        1,
        "the press once: {log}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_slack_press_answers_once_the_message_shows_the_winner_and_forgeries_change_nothing() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(chats(&apis)).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Which **db** <!here>?"), None)
        .await;
    let (values, ts) = slack_post(&apis, "Which *db* &lt;!here&gt;?").await;
    assert_eq!(values.len(), 2, "a button per option");
    assert!(values.iter().all(|v| v.starts_with("clk_link_")));

    // Forged, stale or unsigned: refused, nothing answered.
    let press = pressed(&apis, "alice", &values[1]);
    let forged = slack_signed("not-the-secret", now(), &press);
    let stale = slack_signed(SLACK_SECRET, now() - 400, &press);
    for bad in [&forged, &stale] {
        assert_eq!(slack_press(&server, bad).await, 401);
    }
    assert_eq!(view(&server, &pending).await["status"], "pending");

    // A restart between the post and the press loses nothing.
    let server = server.restart().await;
    let signed = slack_signed(SLACK_SECRET, now(), &press);
    assert_eq!(slack_press(&server, &signed).await, 200);
    let answered = view(&server, &pending).await;
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert_eq!(
        answered["answered_by"],
        json!({"user": "alice", "channel": "slack", "client": ""})
    );
    assert_eq!(
        slack_press(&server, &signed).await,
        401,
        "a replay is refused"
    );

    let update = apis
        .wait_for("chat.update", |b| b["ts"] == ts.as_str())
        .await;
    assert_eq!(
        update.body["channel"], "C0OPS",
        "updated where it was posted"
    );
    assert_eq!(update.body["text"], "Answered by alice in Slack: SQLite");
    assert!(
        update.body["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["type"] != "actions"),
        "buttons gone"
    );

    // A late press (bob, the other button) is told the winner, only to him.
    let late = slack_signed(SLACK_SECRET, now(), &pressed(&apis, "bob", &values[0]));
    assert_eq!(slack_press(&server, &late).await, 200);
    let told = apis.wait_for("response_url", |_| true).await;
    assert_eq!(told.body["response_type"], "ephemeral");
    assert_eq!(
        told.body["text"],
        "Already answered by alice in Slack: SQLite"
    );
    assert_eq!(
        view(&server, &pending).await["response"],
        answered["response"]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_telegram_press_or_reply_answers_and_a_wrong_secret_changes_nothing() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(chats(&apis)).await;
    let (first, _, _) = server
        .ask_expiring(one_question("Pick for Telegram?"), None)
        .await;
    let (data, message_id) = telegram_message(&apis, "Pick for Telegram?").await;
    assert_eq!(data.len(), 2);
    assert!(
        data.iter().all(|d| d.len() <= 64),
        "within callback_data's 64 bytes"
    );

    let press = json!({"update_id": 11, "callback_query": {"id": "cq1",
        "from": {"id": 7, "username": "bob"}, "data": data[0],
        "message": {"message_id": message_id, "chat": {"id": -100}}}});
    assert_eq!(telegram(&server, "wrong", &press).await, 401);
    assert_eq!(view(&server, &first).await["status"], "pending");
    assert_eq!(telegram(&server, TELEGRAM_SECRET, &press).await, 200);
    let answered = view(&server, &first).await;
    assert_eq!(
        answered["answered_by"],
        json!({"user": "bob", "channel": "telegram", "client": ""})
    );
    let told = apis
        .wait_for("answerCallbackQuery", |b| b["callback_query_id"] == "cq1")
        .await;
    assert_eq!(told.body["text"], "Answered: Postgres");
    let edit = apis
        .wait_for("editMessageText", |b| b["message_id"] == message_id)
        .await;
    assert!(
        edit.body["text"]
            .as_str()
            .unwrap()
            .starts_with("Answered by bob in Telegram: Postgres")
    );
    assert_eq!(edit.body["reply_markup"]["inline_keyboard"], json!([]));

    // A reply to the bot's message answers with its text.
    let (second, _, _) = server
        .ask_expiring(one_question("Reply for Telegram?"), None)
        .await;
    let (_, second_id) = telegram_message(&apis, "Reply for Telegram?").await;
    kept(&server, "telegram:-100", second_id).await;
    let reply = json!({"update_id": 12, "message": {"message_id": 900, "text": "MySQL, really",
        "chat": {"id": -100}, "from": {"id": 8, "username": "carol"},
        "reply_to_message": {"message_id": second_id}}});
    assert_eq!(telegram(&server, TELEGRAM_SECRET, &reply).await, 200);
    let replied = view(&server, &second).await;
    assert_eq!(
        replied["response"]["answers"][0]["custom_text"],
        "MySQL, really"
    );
    assert_eq!(replied["answered_by"]["user"], "carol");
    let confirm = apis
        .wait_for("sendMessage", |b| {
            b["reply_parameters"]["message_id"] == 900
        })
        .await;
    assert_eq!(confirm.body["text"], "Answered: “MySQL, really”");
    // Telegram sending the same update again changes nothing.
    let again = json!({"update_id": 12, "message": {"message_id": 901, "text": "changed my mind",
        "chat": {"id": -100}, "from": {"id": 8, "username": "carol"},
        "reply_to_message": {"message_id": second_id}}});
    assert_eq!(telegram(&server, TELEGRAM_SECRET, &again).await, 200);
    assert_eq!(
        view(&server, &second).await["response"],
        replied["response"]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_bundle_of_several_questions_links_to_the_overlay_in_both_chats() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(chats(&apis)).await;
    let questions = json!([
        {"prompt": "Three-part one?", "options": [{"label": "a"}, {"label": "b"}]},
        {"prompt": "Part two?", "options": [{"label": "c"}, {"label": "d"}]},
        {"prompt": "Part three?", "options": [{"label": "e"}, {"label": "f"}]}
    ]);
    let (_, task, _) = server.ask_expiring(questions, None).await;
    let post = apis
        .wait_for("chat.postMessage", |b| {
            b.to_string().contains("Three-part one?")
        })
        .await;
    let button = &post.body["blocks"][1]["elements"][0];
    assert_eq!(button["text"]["text"], "Answer in Clarify");
    assert_eq!(button["url"], server.url(&format!("/t/{task}")));
    let sent = apis
        .wait_for("sendMessage", |b| b.to_string().contains("Three-part one?"))
        .await;
    assert_eq!(
        sent.body["reply_markup"]["inline_keyboard"][0][0]["url"],
        server.url(&format!("/t/{task}"))
    );
    server.stop().await;
}

#[tokio::test]
async fn slack_telegram_a_link_and_rest_racing_for_one_bundle_have_one_winner() {
    let apis = ChatApis::start().await;
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(Config {
        notify_webhooks: vec![sink.url()],
        ..chats(&apis)
    })
    .await;
    for round in 0..20 {
        let prompt = format!("Race round {round}?");
        let (pending, _, _) = server.ask_expiring(one_question(&prompt), None).await;
        let (slack_values, ts) = slack_post(&apis, &prompt).await;
        let (telegram_data, message_id) = telegram_message(&apis, &prompt).await;
        let link = sink.accepted(&format!("{pending}:waiting")).await["actions"][0]["url"]
            .as_str()
            .unwrap()
            .to_owned();
        let signed = slack_signed(
            SLACK_SECRET,
            now(),
            &pressed(&apis, "alice", &slack_values[1]),
        );
        let update = json!({"update_id": 1000 + round, "callback_query": {"id": format!("r{round}"),
            "from": {"username": "bob"}, "data": telegram_data[0]}});
        let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]});
        let (s, t, l, r) = tokio::join!(
            slack_press(&server, &signed),
            telegram(&server, TELEGRAM_SECRET, &update),
            reqwest::Client::new().post(&link).send(),
            server.respond(&pending, &answer),
        );
        assert_eq!(
            (s, t, l.unwrap().status().as_u16(), r.0),
            (200, 200, 200, 200),
            "round {round}"
        );
        let (_, attempts) = server
            .get(&format!("/clarification/{pending}/attempts"))
            .await;
        let outcomes: Vec<&str> = attempts["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["outcome"].as_str().unwrap())
            .collect();
        assert_eq!(
            outcomes.iter().filter(|o| **o == "won").count(),
            1,
            "round {round}: {attempts}"
        );
        assert_eq!(
            outcomes.iter().filter(|o| **o == "lost").count(),
            3,
            "round {round}: {attempts}"
        );
        let winner = view(&server, &pending).await["answered_by"]["channel"]
            .as_str()
            .unwrap()
            .to_owned();
        let phrase = clarify_core::Channel::phrase(&winner);
        let slack = apis
            .wait_for("chat.update", |b| b["ts"] == ts.as_str())
            .await;
        assert!(
            slack.body["text"].as_str().unwrap().contains(phrase),
            "round {round}: {}",
            slack.body
        );
        let telegram = apis
            .wait_for("editMessageText", |b| b["message_id"] == message_id)
            .await;
        assert!(
            telegram.body["text"].as_str().unwrap().contains(phrase),
            "round {round}"
        );
    }
    server.stop().await;
}

/// Telegram without its webhook secret is no longer refused: it polls
/// (issue 48 item 1, tests/tests/telegram_polling.rs).
#[tokio::test]
async fn a_chat_app_half_configured_or_without_its_callback_secret_is_refused_at_start() {
    let apis = ChatApis::start().await;
    let database = clarify_tests::TestDatabase::create().await;
    let cases = [
        (
            Config {
                slack_signing_secret: None,
                ..chats(&apis)
            },
            "--slack-signing-secret",
        ),
        (
            Config {
                slack_channel: None,
                ..chats(&apis)
            },
            "--slack-channel",
        ),
        (
            Config {
                telegram_bot_token: None,
                ..chats(&apis)
            },
            "--telegram-chat-id",
        ),
    ];
    for (config, flag) in cases {
        let db = clarify_server::db::Db::connect(database.url())
            .await
            .unwrap();
        let error = clarify_server::AppState::new(db, config)
            .await
            .expect_err(flag)
            .to_string();
        assert!(error.contains(flag), "{flag}: {error}");
    }
}

#[tokio::test]
async fn a_workspace_owner_adds_a_slack_channel_for_that_workspace_only() {
    let apis = ChatApis::start().await;
    let server = TestServer::start_with(Config {
        auth: true,
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..chats(&apis)
    })
    .await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let owner = server.as_token(&alice);
    let (_, workspace) = owner.post("/workspaces", &json!({"name": "team"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let path = format!("/workspaces/{workspace}/notify");
    let set = json!({"webhook_url": null, "slack_channel": "C0TEAM"});
    assert_eq!(
        server.as_token(&bob).put(&path, &set).await.0,
        404,
        "not bob's"
    );
    for bad in ["<!channel>", "a/b", &"C".repeat(81)] {
        let (status, body) = owner.put(&path, &json!({"slack_channel": bad})).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with("slack_channel"),
            "{body}"
        );
    }
    let (status, body) = owner.put(&path, &set).await;
    assert_eq!(
        (status, &body["slack_channel"]),
        (200, &json!("C0TEAM")),
        "{body}"
    );
    assert_eq!(owner.get(&path).await.1["slack_channel"], "C0TEAM");

    let (_, session, agent) = owner.session_in(&workspace, None).await;
    server
        .ask(&session, &agent, one_question("Team question?"))
        .await;
    for channel in ["C0TEAM", "#ops"] {
        apis.wait_for("chat.postMessage", |b| {
            b["channel"] == channel && b.to_string().contains("Team question?")
        })
        .await;
    }
    // Elsewhere, only the operator's channel.
    let (_, other, other_agent) = owner.session(None).await;
    server
        .ask(&other, &other_agent, one_question("Loose question?"))
        .await;
    apis.wait_for("chat.postMessage", |b| {
        b.to_string().contains("Loose question?")
    })
    .await;
    let (_, last, last_agent) = owner.session_in(&workspace, None).await;
    server
        .ask(&last, &last_agent, one_question("Team again?"))
        .await;
    apis.wait_for("chat.postMessage", |b| {
        b["channel"] == "C0TEAM" && b.to_string().contains("Team again?")
    })
    .await;
    let loose: Vec<_> = apis
        .calls("chat.postMessage")
        .into_iter()
        .filter(|c| c.body.to_string().contains("Loose question?"))
        .map(|c| c.body["channel"].clone())
        .collect();
    assert_eq!(loose, [json!("#ops")]);
    server.stop().await;
}
