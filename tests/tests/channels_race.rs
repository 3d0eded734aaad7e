//! Issue 48 "The race" (Tests list): one server on 127.0.0.1 with no
//! `--public-url`, every remote channel connected out to its stand-in at
//! once (Slack in Socket Mode, Telegram polling, the Discord gateway, ntfy
//! replies). Each round asks a one-question single-choice bundle, waits
//! until every channel shows it, then at once presses it in Slack, Telegram
//! and Discord, publishes the ntfy reply and POSTs a REST answer, each
//! picking its own option (ntfy shows two option buttons, so it takes the
//! second). R3: exactly one winner; every channel's message is updated to
//! the winner's answer (Slack `chat.update`, Telegram `editMessageText`,
//! Discord PATCH, ntfy's resolved notice naming who answered); each loser
//! is told who won in its own way; the attempts log holds the winner and
//! the four losers (no loser is dropped before the claim). All 20 rounds:
//! one took 60–130 ms on the 2-core machine (the whole test about 2 s, on
//! SQLite and PostgreSQL), and every channel, ntfy's reply included, won
//! some rounds over a few runs.

use std::collections::BTreeSet;
use std::time::Duration;

use clarify_server::channels::discord::Flags;
use clarify_server::{Config, Secret};
use clarify_tests::{
    ChatApis, DiscordFake, NtfyFake, SLACK_APP_TOKEN, SLACK_TOKEN, SlackSocket, TELEGRAM_TOKEN,
    TestServer,
};
use serde_json::{Value, json};

const ROUNDS: usize = 20;
const TOPIC: &str = "clarify-race";
const MESSAGES: &str = "/channels/4242/messages";
const LABELS: [&str; 5] = ["Alpha", "Bravo", "Charlie", "Delta", "Echo"];

/// The option each racer picks, by its `answered_by.channel`.
const PICKS: [(&str, usize); 5] = [
    ("slack", 0),
    ("link", 1),
    ("telegram", 2),
    ("discord", 3),
    ("rest", 4),
];

/// The four stand-ins.
struct Services {
    apis: ChatApis,
    socket: SlackSocket,
    discord: DiscordFake,
    ntfy: NtfyFake,
}

impl Services {
    async fn start() -> Self {
        let apis = ChatApis::start().await;
        let socket = SlackSocket::start(&apis).await;
        let discord = DiscordFake::start(Duration::from_secs(1)).await;
        let ntfy = NtfyFake::start(0).await;
        Self {
            apis,
            socket,
            discord,
            ntfy,
        }
    }

    /// Every channel at once, connecting out: no public URL, no signing or
    /// webhook secret.
    fn config(&self) -> Config {
        Config {
            slack_bot_token: Some(Secret(SLACK_TOKEN.into())),
            slack_app_token: Some(Secret(SLACK_APP_TOKEN.into())),
            slack_channel: Some("#ops".into()),
            slack_api_url: Some(self.apis.slack_api()),
            telegram_bot_token: Some(Secret(TELEGRAM_TOKEN.into())),
            telegram_chat_id: Some("-100".into()),
            telegram_api_url: Some(self.apis.telegram_api()),
            discord: Flags {
                bot_token: Some(Secret(clarify_tests::DISCORD_TOKEN.into())),
                channel: Some("4242".into()),
                api_url: Some(self.discord.api_url()),
            },
            notify_ntfy: vec![self.ntfy.topic_url(TOPIC)],
            notify_first_retry: Some(Duration::from_millis(300)),
            channel_lease: Some(Duration::from_secs(1)),
            ..Config::default()
        }
    }

    /// Waits until every channel is connected out.
    async fn connected(&self) {
        self.socket.opened(1).await;
        self.apis.wait_for("getUpdates", |_| true).await;
        self.discord
            .wait_for("gateway", "gateway /gateway", |b| b["op"] == 2)
            .await;
        self.ntfy
            .wait_until(Duration::from_secs(30), |_, subs| !subs.is_empty())
            .await;
    }
}

/// One round's message as each channel shows it.
struct Shown {
    slack_values: Vec<String>,
    slack_ts: String,
    telegram_data: Vec<String>,
    telegram_id: u64,
    discord_ids: Vec<String>,
    discord_message: String,
    discord_content: String,
    ntfy_actions: Vec<Value>,
}

/// Waits until every channel has the bundle asking `prompt`.
async fn shown(s: &Services, pending: &str, prompt: &str) -> Shown {
    let slack = s
        .apis
        .wait_for("chat.postMessage", |b| {
            b["blocks"][0]["text"]["text"]
                .as_str()
                .is_some_and(|t| t.contains(prompt))
        })
        .await;
    let telegram = s
        .apis
        .wait_for("sendMessage", |b| {
            b["text"].as_str().is_some_and(|t| t.contains(prompt))
        })
        .await;
    let discord = s
        .discord
        .wait_for("POST", MESSAGES, |b| {
            b["content"].as_str().is_some_and(|c| c.contains(prompt))
        })
        .await;
    let ntfy = s.ntfy.accepted(&format!("{pending}:waiting")).await;
    let strings = |values: &Value, pointer: &str| -> Vec<String> {
        values
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.pointer(pointer)?.as_str().map(str::to_owned))
            .collect()
    };
    let discord_ids = discord.body["components"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| strings(&row["components"], "/custom_id"))
        .collect();
    Shown {
        slack_values: strings(&slack.body["blocks"][1]["elements"], "/value"),
        slack_ts: format!("1700000000.{:06}", slack.id),
        telegram_data: strings(
            &telegram.body["reply_markup"]["inline_keyboard"],
            "/0/callback_data",
        ),
        telegram_id: telegram.id,
        discord_ids,
        discord_message: format!("{}", 900 + discord.id),
        discord_content: discord.body["content"].as_str().unwrap().to_owned(),
        ntfy_actions: ntfy["actions"].as_array().unwrap().clone(),
    }
}

/// A `block_actions` payload as Slack sends it.
fn slack_press(s: &Services, value: &str, trigger: &str) -> Value {
    json!({"type": "block_actions", "trigger_id": trigger,
        "user": {"id": "U-sam", "username": "sam", "name": "sam"},
        "actions": [{"action_id": "answer_0", "block_id": "clarify", "value": value,
            "type": "button", "action_ts": "1700000000.000100"}],
        "response_url": s.apis.response_url(), "container": {"type": "message"}})
}

/// What the ntfy app sends for an `http` action.
async fn ntfy_tap(action: &Value) -> u16 {
    let method = action["method"].as_str().unwrap().parse().unwrap();
    let mut request = reqwest::Client::new().request(method, action["url"].as_str().unwrap());
    if let Some(headers) = action["headers"].as_object() {
        for (name, value) in headers {
            request = request.header(name, value.as_str().unwrap());
        }
    }
    let body = action["body"].as_str().unwrap_or_default().to_owned();
    request.body(body).send().await.unwrap().status().as_u16()
}

/// The "too late" notices on the notify topic so far.
fn ntfy_told(ntfy: &NtfyFake) -> Vec<String> {
    ntfy.on(TOPIC)
        .into_iter()
        .filter(|m| {
            m.json["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Too late"))
        })
        .map(|m| m.message)
        .collect()
}

/// The option `channel` picks.
fn pick(channel: &str) -> usize {
    PICKS.iter().find(|(c, _)| *c == channel).unwrap().1
}

/// One round: ask, wait for every channel, race five answers at once,
/// check the outcome everywhere.
#[allow(clippy::too_many_lines)]
async fn round(server: &TestServer, s: &Services, n: usize) {
    let prompt = format!("Race round {n}?");
    let options: Vec<Value> = LABELS.iter().map(|l| json!({"label": l})).collect();
    let questions = json!([{"prompt": prompt, "options": options}]);
    let (pending, _, _) = server.ask_expiring(questions, None).await;
    let shown = shown(s, &pending, &prompt).await;
    assert_eq!(shown.slack_values.len(), 5, "Slack: a button per option");
    assert_eq!(
        shown.telegram_data.len(),
        5,
        "Telegram: a button per option"
    );
    assert_eq!(shown.discord_ids.len(), 5, "Discord: a button per option");
    let told_before = ntfy_told(&s.ntfy).len();
    let slack_told_before = s.apis.calls("response_url").len();

    let rest_body = json!({"answers": [{"question_id": "q1",
        "selected_options": [format!("q1_opt{}", pick("rest") + 1)]}]});
    let (slack_envelope, telegram_query, discord_callback, ntfy_status, (rest_status, rest)) = tokio::join!(
        async {
            s.socket.interaction(&slack_press(
                s,
                &shown.slack_values[pick("slack")],
                &format!("t-{n}"),
            ))
        },
        async {
            s.apis
                .telegram_press(&shown.telegram_data[pick("telegram")], "tess")
        },
        async {
            s.discord.press(
                "dora",
                &shown.discord_ids[pick("discord")],
                &shown.discord_message,
                &shown.discord_content,
            )
        },
        ntfy_tap(&shown.ntfy_actions[pick("link")]),
        server.respond(&pending, &rest_body),
    );
    assert!((200..300).contains(&ntfy_status), "{ntfy_status}");
    assert_eq!(rest_status, 200, "{rest}");

    // Every press is settled: Slack's acknowledged, Telegram's and
    // Discord's answered.
    s.socket.acked(&slack_envelope).await;
    let telegram_told = s
        .apis
        .wait_for("answerCallbackQuery", |b| {
            b["callback_query_id"] == telegram_query.as_str()
        })
        .await;
    let discord_told = s
        .discord
        .wait_for("POST", &discord_callback, |_| true)
        .await;

    // Exactly one winner, as the bundle says.
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "answered", "{view}");
    let winner = view["answered_by"].clone();
    let channel = winner["channel"].as_str().unwrap().to_owned();
    let user = winner["user"].as_str().unwrap();
    let label = LABELS[pick(&channel)];
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!([format!("q1_opt{}", pick(&channel) + 1)]),
        "the winner's own pick: {view}"
    );
    let expected_user = match channel.as_str() {
        "slack" => "sam",
        "telegram" => "tess",
        "discord" => "dora",
        _ => "anonymous",
    };
    assert_eq!(user, expected_user, "{winner}");
    if channel == "link" {
        assert_eq!(winner["client"], "ntfy", "{winner}");
    }
    let who = format!(
        "{user} {}",
        clarify_core::provenance::Channel::phrase(&channel)
    );
    let late = format!("Already answered by {who}: {label}");

    // REST: claimed only if it won; a loser sees the winner's answer.
    assert_eq!(rest["claimed"] == true, channel == "rest", "{rest}");
    assert_eq!(rest["response"]["answers"], view["response"]["answers"]);

    // Slack: the loser told ephemerally; the message updated to the winner.
    if channel == "slack" {
        assert_eq!(s.apis.calls("response_url").len(), slack_told_before);
    } else {
        s.apis
            .wait_count("response_url", slack_told_before + 1)
            .await;
        let told = s.apis.calls("response_url").pop().unwrap();
        assert_eq!(told.body["response_type"], "ephemeral");
        assert_eq!(told.body["text"], late.as_str());
    }
    let ts = shown.slack_ts.as_str();
    let said = format!("Answered by {who}: {label}");
    s.apis
        .wait_for("chat.update", |b| {
            b["ts"] == ts && b["text"] == said.as_str()
        })
        .await;
    for update in s.apis.calls("chat.update") {
        if update.body["ts"] == ts {
            assert_eq!(update.body["text"], said.as_str(), "no other winner shown");
        }
    }

    // Telegram: the presser told; the message edited to the winner.
    let telegram_line = telegram_told.body["text"].as_str().unwrap();
    if channel == "telegram" {
        assert_eq!(telegram_line, format!("Answered: {label}"));
    } else {
        assert_eq!(telegram_line, late);
    }
    let message_id = shown.telegram_id;
    s.apis
        .wait_for("editMessageText", |b| {
            b["message_id"] == message_id
                && b["text"].as_str().is_some_and(|t| t.starts_with(&said))
        })
        .await;
    for edit in s.apis.calls("editMessageText") {
        if edit.body["message_id"] == message_id {
            let text = edit.body["text"].as_str().unwrap();
            assert!(text.starts_with(&said), "no other winner shown: {text}");
        }
    }

    // Discord: the pressed message updated (type 7) or the loser told
    // ephemerally (type 4, flags 64); the message PATCHed to the winner.
    if channel == "discord" {
        assert_eq!(discord_told.body["type"], 7, "{:?}", discord_told.body);
    } else {
        assert_eq!(discord_told.body["type"], 4, "{:?}", discord_told.body);
        assert_eq!(discord_told.body["data"]["flags"], 64);
        let line = discord_told.body["data"]["content"].as_str().unwrap();
        assert!(
            line.starts_with("Already answered") && line.contains(label),
            "{line}"
        );
    }
    let escaped = format!("**Answered by {who}\\: {label}**");
    let patches = format!("{MESSAGES}/{}", shown.discord_message);
    s.discord
        .wait_for("PATCH", &patches, |b| {
            b["components"] == json!([])
                && b["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with(&escaped))
        })
        .await;
    for patch in s.discord.calls("PATCH", &patches) {
        let content = patch.body["content"].as_str().unwrap();
        assert!(
            content.starts_with(&escaped),
            "no other winner shown: {content}"
        );
    }

    // ntfy: the resolved notice names the winner; a losing reply is told
    // who won, as a new notice.
    let resolved = s.ntfy.accepted(&format!("{pending}:resolved")).await;
    assert_eq!(resolved["message"], format!("Answered by {who}: {prompt}"));
    if channel != "link" {
        s.ntfy
            .wait_until(Duration::from_secs(30), |m, _| {
                m.iter()
                    .filter(|m| m.topic == TOPIC && m.json["title"] == "Too late: a task")
                    .count()
                    > told_before
            })
            .await;
    }
    let told = ntfy_told(&s.ntfy);
    let expected_told = told_before + usize::from(channel != "link");
    assert_eq!(told.len(), expected_told, "{told:?}");
    if channel != "link" {
        assert_eq!(told.last().unwrap(), &late);
    }

    // The attempts log: the winner first, then the four losers.
    let (_, log) = server
        .get(&format!("/clarification/{pending}/attempts"))
        .await;
    let attempts = log["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 5, "{log}");
    assert_eq!(attempts[0]["outcome"], "won", "{log}");
    assert_eq!(attempts[0]["channel"], channel.as_str(), "{log}");
    assert_eq!(attempts[0]["user"], user, "{log}");
    assert!(
        attempts[1..].iter().all(|a| a["outcome"] == "lost"),
        "{log}"
    );
    let channels: BTreeSet<&str> = attempts
        .iter()
        .map(|a| a["channel"].as_str().unwrap())
        .collect();
    assert_eq!(
        channels,
        PICKS.iter().map(|(c, _)| *c).collect(),
        "one attempt per channel: {log}"
    );
}

/// Issue 48 "The race": `ROUNDS` rounds of five channels answering at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_channels_answering_at_once_have_one_winner_every_round() {
    let services = Services::start().await;
    let server = TestServer::start_with(services.config()).await;
    services.connected().await;
    for n in 1..=ROUNDS {
        round(&server, &services, n).await;
    }
    assert_eq!(
        services.socket.late(),
        Vec::<String>::new(),
        "Slack acks in time"
    );
    server.stop().await;
}
