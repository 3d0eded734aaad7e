//! Discord (issue 48 item 1, "Discord (new)") against a local stand-in
//! speaking its documented REST API and Gateway: the bot identifies with
//! no intents and heartbeats; a withheld heartbeat ACK makes Clarify close
//! the zombie connection and resume the session at its resume URL; a
//! waiting question is posted with a button per option, its markdown
//! escaped; a press (`INTERACTION_CREATE`) answers through the one claim
//! and updates the message (type 7), which the outbox then edits to the
//! winner, buttons gone; a late press is told ephemerally who won. All
//! with the server on 127.0.0.1 and no `--public-url`: it is never called.

use std::time::Duration;

use clarify_server::channels::discord::Flags;
use clarify_server::{Config, Secret};
use clarify_tests::{DISCORD_SESSION, DISCORD_TOKEN, DiscordFake, TestServer};
use serde_json::{Value, json};

const CHANNEL: &str = "4242";

fn discord(fake: &DiscordFake) -> Config {
    Config {
        discord: Flags {
            bot_token: Some(Secret(DISCORD_TOKEN.into())),
            channel: Some(CHANNEL.into()),
            api_url: Some(fake.api_url()),
        },
        notify_first_retry: Some(Duration::from_millis(300)),
        ..Config::default()
    }
}

fn one_question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "Postgres"}, {"label": "SQLite"}]}])
}

const MESSAGES: &str = "/channels/4242/messages";

/// The post naming `text`: its buttons' `custom_id`s, its id and content.
async fn posted(fake: &DiscordFake, text: &str) -> (Vec<String>, String, String) {
    let post = fake
        .wait_for("POST", MESSAGES, |b| {
            b["content"].as_str().is_some_and(|c| c.contains(text))
        })
        .await;
    let ids = post.body["components"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row["components"].as_array().unwrap().clone())
        .filter_map(|b| b["custom_id"].as_str().map(str::to_owned))
        .collect();
    let id = format!("{}", 900 + post.id);
    (ids, id, post.body["content"].as_str().unwrap().to_owned())
}

async fn identified(fake: &DiscordFake) {
    fake.wait_for("gateway", "gateway /gateway", |b| b["op"] == 2)
        .await;
}

/// What `/healthz` says of the channels.
async fn health(server: &TestServer) -> Value {
    server.channels().await
}

async fn view(server: &TestServer, pending: &str) -> Value {
    server.get(&format!("/clarification/{pending}")).await.1
}

/// Issue 48 item 1: the bot asks `GET /gateway/bot` for the URL, answers
/// the hello with identify (its token, intents 0: interactions need none)
/// and heartbeats carrying the last sequence number.
#[tokio::test]
async fn the_bot_identifies_with_no_intents_and_heartbeats() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    let identify = fake
        .wait_for("gateway", "gateway /gateway", |b| b["op"] == 2)
        .await;
    assert_eq!(identify.body["d"]["token"], DISCORD_TOKEN);
    assert_eq!(identify.body["d"]["intents"], 0);
    assert!(identify.body["d"]["properties"]["browser"].is_string());
    assert_eq!(fake.calls("GET", "/gateway/bot").len(), 1);
    // READY was dispatch 1 here: the heartbeats say so.
    let beat = fake
        .wait_for("gateway", "gateway /gateway", |b| {
            b["op"] == 1 && b["d"].is_u64()
        })
        .await;
    assert!(beat.body["d"].as_u64().unwrap() >= 1, "{:?}", beat.body);
    fake.wait_for("gateway", "gateway /gateway", |b| {
        b["op"] == 1 && fake_beats(&fake) >= 3
    })
    .await;
    assert_eq!(
        fake.connections(),
        1,
        "acknowledged heartbeats keep one connection"
    );
    // Item 4: what the channel is doing, said by /healthz.
    let health = health(&server).await;
    assert_eq!(health["discord"]["state"], "connected", "{health}");
    assert_eq!(health["discord"]["mode"], "gateway", "{health}");
    server.stop().await;
}

fn fake_beats(fake: &DiscordFake) -> usize {
    fake.calls("gateway", "gateway /gateway")
        .iter()
        .filter(|c| c.body["op"] == 1)
        .count()
}

/// Issue 48 item 1: a heartbeat never acknowledged (op 11) is a zombie
/// connection: Clarify closes it and resumes (op 6, the session and the
/// last sequence number) at READY's `resume_gateway_url`, without a new
/// identify; a press dispatched meanwhile is delivered on the resumed
/// connection and answered once.
#[tokio::test]
async fn a_withheld_heartbeat_ack_makes_clarify_reconnect_and_resume() {
    let fake = DiscordFake::start(Duration::from_millis(500)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    identified(&fake).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Resume then pick?"), None)
        .await;
    let (ids, message, content) = posted(&fake, "Resume then pick?").await;
    fake.withhold_acks(true);
    // Pressed while the connection is a zombie.
    let callback = fake.press("carol", &ids[0], &message, &content);
    let resume = fake
        .wait_for("gateway", "gateway /resume", |b| b["op"] == 6)
        .await;
    fake.withhold_acks(false);
    assert_eq!(resume.body["d"]["session_id"], DISCORD_SESSION);
    assert_eq!(resume.body["d"]["token"], DISCORD_TOKEN);
    assert!(resume.body["d"]["seq"].as_u64().unwrap() >= 1);
    let told = fake.wait_for("POST", &callback, |_| true).await;
    assert_eq!(told.body["type"], 7, "{:?}", told.body);
    let answered = view(&server, &pending).await;
    assert_eq!(
        answered["answered_by"],
        json!({"user": "carol", "channel": "discord", "client": ""})
    );
    let identifies = fake
        .calls("gateway", "gateway /")
        .iter()
        .filter(|c| c.body["op"] == 2)
        .count();
    assert_eq!(identifies, 1, "resumed, not identified again");
    assert_eq!(
        fake.calls("POST", &callback).len(),
        1,
        "the press answered once"
    );
    server.stop().await;
}

/// Issue 48 item 1: a waiting question is posted with a button per option
/// (`custom_id` an answer link's token within Discord's 100 characters),
/// its markdown and mentions escaped and no mention allowed; a press
/// answers through the claim as the Discord user, the pressed message is
/// updated at once (type 7, buttons gone), and the outbox edits it to the
/// winner (PATCH, components removed).
#[tokio::test]
async fn a_button_press_answers_and_the_message_is_updated() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    identified(&fake).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Ship **now** to <@123> @everyone?"), None)
        .await;
    let (ids, message, content) = posted(&fake, r"Ship \*\*now\*\* to \<\@123\> \@everyone?").await;
    assert_eq!(ids.len(), 2, "a button per option");
    assert!(
        ids.iter()
            .all(|i| i.starts_with("clk_link_") && i.len() <= 100)
    );
    let post = &fake.calls("POST", MESSAGES)[0];
    assert_eq!(post.body["allowed_mentions"], json!({"parse": []}));
    assert!(!content.contains("**now**"), "{content}");

    let callback = fake.press("alice", &ids[1], &message, &content);
    let told = fake.wait_for("POST", &callback, |_| true).await;
    assert_eq!(told.body["type"], 7, "{:?}", told.body);
    assert_eq!(told.body["data"]["components"], json!([]));
    assert!(
        told.body["data"]["content"]
            .as_str()
            .unwrap()
            .ends_with("**Answered by alice in Discord: SQLite**"),
        "{:?}",
        told.body
    );
    let answered = view(&server, &pending).await;
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert_eq!(
        answered["answered_by"],
        json!({"user": "alice", "channel": "discord", "client": ""})
    );
    let edit = fake
        .wait_for("PATCH", &format!("{MESSAGES}/{message}"), |_| true)
        .await;
    assert_eq!(edit.body["components"], json!([]));
    assert!(
        edit.body["content"]
            .as_str()
            .unwrap()
            .starts_with("**Answered by alice in Discord\\: SQLite**"),
        "{:?}",
        edit.body
    );
    server.stop().await;
}

/// Issue 48 item 1: a press after the question was answered elsewhere is
/// told, seen only by the presser (type 4, flags 64), who won; the answer
/// stands.
#[tokio::test]
async fn a_late_press_is_told_ephemerally_who_won() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    identified(&fake).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Late to the party?"), None)
        .await;
    let (ids, message, content) = posted(&fake, "Late to the party?").await;
    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&pending, &answer).await.0, 200);
    let callback = fake.press("bob", &ids[1], &message, &content);
    let told = fake.wait_for("POST", &callback, |_| true).await;
    assert_eq!(told.body["type"], 4, "{:?}", told.body);
    assert_eq!(told.body["data"]["flags"], 64);
    let line = told.body["data"]["content"].as_str().unwrap();
    assert!(line.starts_with("Already answered"), "{line}");
    assert!(line.contains("Postgres"), "{line}");
    let view = view(&server, &pending).await;
    assert_eq!(view["answered_by"]["channel"], "rest");
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1"])
    );
    server.stop().await;
}

/// Issue 48 item 1: on 127.0.0.1 with no public URL, a bundle of several
/// questions gets no link button (it would point at the laptop's
/// loopback) but a line saying to answer in Clarify.
#[tokio::test]
async fn a_bundle_with_no_public_url_says_to_answer_in_clarify() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    let questions = json!([
        {"prompt": "Two-part one?", "options": [{"label": "a"}, {"label": "b"}]},
        {"prompt": "Part two?", "options": [{"label": "c"}, {"label": "d"}]}
    ]);
    server.ask_expiring(questions, None).await;
    let post = fake
        .wait_for("POST", MESSAGES, |b| {
            b["content"]
                .as_str()
                .is_some_and(|c| c.contains("Two\\-part one?"))
        })
        .await;
    assert_eq!(post.body["components"], json!([]), "{:?}", post.body);
    assert!(
        post.body["content"]
            .as_str()
            .unwrap()
            .ends_with("Answer it in Clarify.")
    );
    server.stop().await;
}

/// Issue 48 (shared rule): the gateway URL Discord hands back is held to
/// the network policy: with auth on, only the REST API's own socket
/// allowed, a gateway on another loopback socket is never connected to.
#[tokio::test]
async fn a_gateway_url_the_network_policy_refuses_is_not_connected() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let config = Config {
        auth: true,
        own_webhook_sockets: vec![fake.api_socket()],
        ..discord(&fake)
    };
    let server = TestServer::start_with(config).await;
    // Asked twice: the first try failed, and was tried again.
    fake.wait_for("GET", "/gateway/bot", |_| {
        fake.calls("GET", "/gateway/bot").len() >= 2
    })
    .await;
    assert_eq!(
        fake.connections(),
        0,
        "never connected to the refused gateway"
    );
    server.stop().await;
}

/// Issue 48 items 1 and 2: one gateway session per bot, held under the
/// `discord` lease with the session as its cursor: a second server on the
/// same database stands by; when the holder stops, it takes the lease
/// over, resumes the session (op 6 at the resume URL, no second identify),
/// and a press made while nobody held it, replayed by Discord, is answered
/// once.
#[tokio::test]
async fn another_server_takes_the_session_over_and_a_press_made_meanwhile_is_answered_once() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let config = Config {
        channel_lease: Some(Duration::from_secs(1)),
        ..discord(&fake)
    };
    let server = TestServer::start_with(config.clone()).await;
    identified(&fake).await;
    let (pending, _, _) = server
        .ask_expiring(one_question("Across a handover?"), None)
        .await;
    let (ids, message, content) = posted(&fake, "Across a handover?").await;
    let standby = server.replica_with(config).await;
    let health = async {
        loop {
            let health = health(&standby).await;
            if health["discord"]["state"]
                .as_str()
                .is_some_and(|s| s.starts_with("standby"))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), health)
        .await
        .expect("the second server stands by");
    assert_eq!(fake.connections(), 1, "one session per bot");
    server.stop().await;
    let callback = fake.press("dave", &ids[0], &message, &content);
    let resume = fake
        .wait_for("gateway", "gateway /resume", |b| b["op"] == 6)
        .await;
    assert_eq!(resume.body["d"]["session_id"], DISCORD_SESSION);
    let told = fake.wait_for("POST", &callback, |_| true).await;
    assert_eq!(told.body["type"], 7, "{:?}", told.body);
    assert_eq!(
        view(&standby, &pending).await["answered_by"]["user"],
        "dave"
    );
    let identifies = fake
        .calls("gateway", "gateway /")
        .iter()
        .filter(|c| c.body["op"] == 2)
        .count();
    assert_eq!(identifies, 1, "resumed, not identified again");
    assert_eq!(fake.calls("POST", &callback).len(), 1, "answered once");
    standby.stop().await;
}

/// Issue 48 item 1: a workspace's owner adds the workspace's own Discord
/// channel (`PUT /workspaces/{id}/notify`, `discord_channel`, digits
/// only); its questions are posted there as well as to the operator's
/// channel, other workspaces' only to the operator's.
#[tokio::test]
async fn a_workspace_owner_adds_a_discord_channel_for_that_workspace_only() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(Config {
        auth: true,
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..discord(&fake)
    })
    .await;
    let alice = server.token("alice").await;
    let owner = server.as_token(&alice);
    let (_, workspace) = owner.post("/workspaces", &json!({"name": "team"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let path = format!("/workspaces/{workspace}/notify");
    for bad in ["<#1>", "12a", &"1".repeat(21)] {
        let (status, body) = owner.put(&path, &json!({"discord_channel": bad})).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("discord_channel"),
            "{body}"
        );
    }
    let (status, body) = owner
        .put(
            &path,
            &json!({"webhook_url": null, "discord_channel": "777"}),
        )
        .await;
    assert_eq!(
        (status, &body["discord_channel"]),
        (200, &json!("777")),
        "{body}"
    );
    assert_eq!(owner.get(&path).await.1["discord_channel"], "777");

    let (_, session, agent) = owner.session_in(&workspace, None).await;
    server
        .ask(&session, &agent, one_question("Team question?"))
        .await;
    for channel in ["/channels/777/messages", MESSAGES] {
        fake.wait_for("POST", channel, |b| {
            b["content"]
                .as_str()
                .is_some_and(|c| c.contains("Team question?"))
        })
        .await;
    }
    let (_, other, other_agent) = owner.session(None).await;
    server
        .ask(&other, &other_agent, one_question("Loose question?"))
        .await;
    fake.wait_for("POST", MESSAGES, |b| {
        b["content"]
            .as_str()
            .is_some_and(|c| c.contains("Loose question?"))
    })
    .await;
    let (_, last, last_agent) = owner.session_in(&workspace, None).await;
    server
        .ask(&last, &last_agent, one_question("Team again?"))
        .await;
    fake.wait_for("POST", "/channels/777/messages", |b| {
        b["content"]
            .as_str()
            .is_some_and(|c| c.contains("Team again?"))
    })
    .await;
    let loose = fake
        .calls("POST", "/channels/777/messages")
        .iter()
        .filter(|c| c.body.to_string().contains("Loose question?"))
        .count();
    assert_eq!(loose, 0, "another workspace's question is not posted there");
    server.stop().await;
}

/// Issue 48 item 1: a reminder is a reply to the question's message; at
/// expiry the message is edited to say so, buttons gone.
#[tokio::test]
async fn a_reminder_replies_to_the_message_and_expiry_edits_it() {
    let fake = DiscordFake::start(Duration::from_secs(1)).await;
    let server = TestServer::start_with(discord(&fake)).await;
    server
        .ask_expiring(one_question("Soon gone?"), Some(3))
        .await;
    let (_, message, _) = posted(&fake, "Soon gone?").await;
    let reminder = fake
        .wait_for("POST", MESSAGES, |b| {
            b["message_reference"]["message_id"] == message.as_str()
        })
        .await;
    assert!(
        reminder.body["content"]
            .as_str()
            .unwrap()
            .starts_with("Reminder: still waiting"),
        "{:?}",
        reminder.body
    );
    assert_eq!(reminder.body["allowed_mentions"], json!({"parse": []}));
    let edit = fake
        .wait_for("PATCH", &format!("{MESSAGES}/{message}"), |_| true)
        .await;
    assert!(
        edit.body["content"]
            .as_str()
            .unwrap()
            .starts_with("**Expired without an answer**"),
        "{:?}",
        edit.body
    );
    assert_eq!(edit.body["components"], json!([]));
    server.stop().await;
}
