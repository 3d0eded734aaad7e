//! ntfy replies through ntfy itself (issue 48 item 1): a notice's option
//! buttons publish their answer link's token to a reply topic on the same
//! ntfy server, which Clarify subscribes to, so a tap answers while the
//! phone never reaches Clarify. The server listens on 127.0.0.1 with the
//! links `clarify serve` gives without `--public-url` (its own listening
//! address, which a phone cannot reach); every tap here goes to the
//! stand-in ntfy ([`NtfyFake`]) only, as the ntfy app sends it.

use std::time::Duration;

use clarify_server::{Config, Secret};
use clarify_tests::{NtfyFake, Published, TestServer};
use serde_json::{Value, json};

const TOPIC: &str = "clarify-alice";

fn phone(ntfy: &NtfyFake, token: Option<&str>) -> Config {
    Config {
        notify_ntfy: vec![ntfy.topic_url(TOPIC)],
        ntfy_token: token.map(|t| Secret(t.to_owned())),
        notify_first_retry: Some(Duration::from_millis(300)),
        ..Config::default()
    }
}

/// What the ntfy app sends for an `http` action: its method, URL, headers
/// and body, nothing else.
async fn tap(action: &Value) {
    assert_eq!(action["action"], "http", "{action}");
    let method = action["method"].as_str().unwrap().parse().unwrap();
    let mut request = reqwest::Client::new().request(method, action["url"].as_str().unwrap());
    if let Some(headers) = action["headers"].as_object() {
        for (name, value) in headers {
            request = request.header(name, value.as_str().unwrap());
        }
    }
    let body = action["body"].as_str().unwrap_or_default().to_owned();
    let status = request
        .body(body)
        .send()
        .await
        .expect("ntfy is up")
        .status();
    assert!(status.is_success(), "{status}");
}

/// Publishes `text` to `url` as anyone could.
async fn publish(url: &str, text: &str) {
    let status = reqwest::Client::new()
        .post(url)
        .body(text.to_owned())
        .send()
        .await
        .unwrap()
        .status();
    assert!(status.is_success());
}

async fn ask(server: &TestServer, prompt: &str) -> String {
    let questions = json!([{"prompt": prompt,
        "options": [{"label": "Deploy"}, {"label": "Hold"}]}]);
    server.ask_expiring(questions, None).await.0
}

async fn view(server: &TestServer, pending: &str) -> Value {
    server.get(&format!("/clarification/{pending}")).await.1
}

/// The "too late" notices on the notify topic so far.
fn told(ntfy: &NtfyFake) -> Vec<String> {
    told_in(&ntfy.messages())
}

/// The "too late" notices among `messages`.
fn told_in(messages: &[Published]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m.topic == TOPIC)
        .filter(|m| {
            m.json["title"]
                .as_str()
                .is_some_and(|t| t.starts_with("Too late"))
        })
        .map(|m| m.message.clone())
        .collect()
}

/// issue 48 items 1 and 4: the reply action's URL and body are ntfy's
/// documented `http` action publishing to the reply topic on the same ntfy
/// server (with the token ntfy needs); a tap answers through the one
/// claim; `/healthz` says the replies are subscribed.
#[tokio::test]
async fn a_tap_publishes_the_options_token_to_the_reply_topic_and_answers() {
    let ntfy = NtfyFake::start(0).await;
    let server = TestServer::start_with(phone(&ntfy, Some("tk_phone"))).await;
    let pending = ask(&server, "Deploy to <prod>?").await;
    let waiting = ntfy.accepted(&format!("{pending}:waiting")).await;
    let actions = waiting["actions"].as_array().expect("actions").clone();
    assert_eq!(actions.len(), 2);
    let reply_url = actions[0]["url"].as_str().unwrap().to_owned();
    let reply_topic = reply_url
        .strip_prefix(&ntfy.topic_url(""))
        .expect("a topic on the same ntfy server");
    assert!(
        reply_topic.starts_with("clarify-r-") && reply_topic.len() == 42,
        "{reply_topic}"
    );
    for (action, label) in actions.iter().zip(["Deploy", "Hold"]) {
        let body = action["body"].as_str().unwrap();
        assert!(body.starts_with("clk_link_") && body.len() == 57, "{body}");
        assert_eq!(
            *action,
            json!({"action": "http", "label": label, "url": reply_url, "method": "POST",
                   "body": body, "clear": true,
                   "headers": {"Authorization": "Bearer tk_phone"}})
        );
    }
    assert_ne!(actions[0]["body"], actions[1]["body"]);
    let shown = waiting.to_string();
    assert!(
        !shown.contains(&format!("/answer/{}", actions[0]["body"].as_str().unwrap())),
        "the buttons never lead to Clarify: {shown}"
    );

    tap(&actions[1]).await;
    let resolved = ntfy.accepted(&format!("{pending}:resolved")).await;
    assert_eq!(resolved["title"], "Answered: a task");
    let answered = view(&server, &pending).await;
    assert_eq!(answered["status"], "answered");
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert_eq!(
        answered["answered_by"],
        json!({"user": "anonymous", "channel": "link", "client": "ntfy"})
    );
    let subscriptions = ntfy.subscriptions();
    assert_eq!(subscriptions[0].topic, reply_topic);
    assert_eq!(subscriptions[0].authorization, "Bearer tk_phone");
    assert!(told(&ntfy).is_empty());
    // issue 48 item 4: what the subscription is doing.
    let health = server.channels().await;
    assert_eq!(
        health["ntfy replies"],
        json!({"state": "connected", "mode": "subscribed", "down": false})
    );
    server.stop().await;
}

/// issue 48 item 1: the subscription resumes with `since=` the last reply
/// handled, after a dropped stream and after a Clarify restart; a reply
/// sent while Clarify was down is read once.
#[tokio::test]
async fn a_reply_sent_while_clarify_was_down_is_read_once_after_a_restart() {
    let ntfy = NtfyFake::start(0).await;
    let server = TestServer::start_with(phone(&ntfy, None)).await;
    let first = ask(&server, "First?").await;
    let waiting = ntfy.accepted(&format!("{first}:waiting")).await;
    tap(&waiting["actions"][0]).await;
    ntfy.accepted(&format!("{first}:resolved")).await;
    let reply_topic = ntfy.subscriptions()[0].topic.clone();
    let first_reply = ntfy.on(&reply_topic)[0].id.clone();

    // A dropped stream is opened again after the last reply handled.
    ntfy.drop_streams();
    ntfy.wait_until(Duration::from_secs(30), |_, subs| {
        subs.iter().any(|s| s.since == first_reply)
    })
    .await;

    let second = ask(&server, "Second?").await;
    let waiting = ntfy.accepted(&format!("{second}:waiting")).await;
    let hold = waiting["actions"][1].clone();
    let before = ntfy.subscriptions().len();
    let server = server.restart_after(tap(&hold)).await;
    let resolved = ntfy.accepted(&format!("{second}:resolved")).await;
    assert_eq!(resolved["title"], "Answered: a task");
    let answered = view(&server, &second).await;
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    let after: Vec<_> = ntfy.subscriptions().split_off(before);
    assert_eq!(
        after[0].since, first_reply,
        "resumed after the last reply handled, not from the start: {after:?}"
    );
    // Once: the first reply was not read again (it would be told it is
    // late), nor the second.
    assert!(told(&ntfy).is_empty(), "{:?}", told(&ntfy));
    server.stop().await;
}

/// issue 48 item 1: forged, oversized and foreign replies, the same press
/// again and the same message again change nothing and publish nothing; a
/// press on a question another already answered is told who won, and one
/// on a closed question that it is closed, as a new notice.
#[tokio::test]
async fn forged_repeated_and_late_replies() {
    let ntfy = NtfyFake::start(0).await;
    let server = TestServer::start_with(phone(&ntfy, None)).await;
    let pending = ask(&server, "Ship it?").await;
    let waiting = ntfy.accepted(&format!("{pending}:waiting")).await;
    let [deploy, hold] = [waiting["actions"][0].clone(), waiting["actions"][1].clone()];
    let reply_url = deploy["url"].as_str().unwrap().to_owned();
    let token = deploy["body"].as_str().unwrap().to_owned();

    let forged = format!("clk_link_{}", "0".repeat(48));
    let bent = format!("{}x", &token[..token.len() - 1]);
    let oversized = format!("{token}{}", " a".repeat(3000));
    for junk in [
        forged.as_str(),
        bent.as_str(),
        &token["clk_link_".len()..],
        oversized.as_str(),
        "hello",
        "",
    ] {
        publish(&reply_url, junk).await;
    }
    // Another server's reply topic on the same ntfy: not read.
    publish(
        &ntfy.topic_url("clarify-r-00000000000000000000000000000000"),
        &token,
    )
    .await;

    tap(&hold).await;
    tap(&hold).await;
    tap(&deploy).await;
    ntfy.wait_until(Duration::from_secs(30), |m, _| !told_in(m).is_empty())
        .await;
    assert_eq!(
        told(&ntfy),
        ["Already answered by anonymous through an answer link: Hold"],
        "the repeated press told nothing, the late one who won"
    );
    let answered = view(&server, &pending).await;
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"]),
        "the junk changed nothing"
    );
    let mut notices = ntfy.on(TOPIC).into_iter().map(|m| m.json);
    let late = notices.rfind(|j| j["title"] != "Answered: a task").unwrap();
    assert_eq!(late["title"], "Too late: a task");
    assert!(late.get("actions").is_none());

    // The late reply sent again with its own id is not read again; a
    // closed (cancelled) question is told so.
    let late_reply = ntfy.on(deploy["url"].as_str().unwrap().rsplit('/').next().unwrap());
    ntfy.resend(&late_reply.last().unwrap().id);
    let cancelled = ask(&server, "Cancel me?").await;
    let waiting = ntfy.accepted(&format!("{cancelled}:waiting")).await;
    let (status, _) = server
        .post(&format!("/clarification/{cancelled}/cancel"), &json!({}))
        .await;
    assert_eq!(status, 200);
    tap(&waiting["actions"][0]).await;
    ntfy.wait_until(Duration::from_secs(30), |m, _| told_in(m).len() >= 2)
        .await;
    assert_eq!(
        told(&ntfy),
        [
            "Already answered by anonymous through an answer link: Hold",
            "This question is no longer waiting for an answer."
        ]
    );
    server.stop().await;
}

/// `/healthz`'s state of the ntfy replies on `server`.
async fn replies_state(server: &TestServer) -> String {
    server.channels().await["ntfy replies"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// issue 48 item 2: with two replicas on PostgreSQL one reads the reply
/// topic and the other stands by; when the reader stops, the other takes
/// the subscription over from the last reply handled, and a reply sent
/// meanwhile is read once. Ignored unless the run tests PostgreSQL.
#[tokio::test]
#[ignore = "needs PostgreSQL"]
async fn one_replica_reads_the_replies_and_the_other_takes_over() {
    assert!(
        clarify_tests::testing_postgres(),
        "set CLARIFY_TEST_POSTGRES_URL: several replicas need PostgreSQL"
    );
    let ntfy = NtfyFake::start(0).await;
    let config = Config {
        channel_lease: Some(Duration::from_millis(900)),
        ..phone(&ntfy, None)
    };
    let first = TestServer::start_with(config).await;
    let second = first.replica().await;
    let before = ask(&first, "Before?").await;
    let waiting = ntfy.accepted(&format!("{before}:waiting")).await;
    tap(&waiting["actions"][0]).await;
    ntfy.accepted(&format!("{before}:resolved")).await;
    let reply_topic = ntfy.subscriptions()[0].topic.clone();
    let handled = ntfy.on(&reply_topic)[0].id.clone();
    assert_eq!(ntfy.subscriptions().len(), 1, "one reader");
    let states = [replies_state(&first).await, replies_state(&second).await];
    let reader = states
        .iter()
        .position(|s| s == "connected")
        .expect("a reader");
    assert!(states[1 - reader].starts_with("standby"), "{states:?}");
    let (reader, other) = if reader == 0 {
        (first, second)
    } else {
        (second, first)
    };

    let during = ask(&other, "During?").await;
    let waiting = ntfy.accepted(&format!("{during}:waiting")).await;
    reader.stop().await;
    tap(&waiting["actions"][1]).await;
    ntfy.accepted(&format!("{during}:resolved")).await;
    let answered = view(&other, &during).await;
    assert_eq!(
        answered["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    let subscriptions = ntfy.subscriptions();
    assert_eq!(subscriptions.len(), 2, "{subscriptions:?}");
    assert_eq!(
        subscriptions[1].since, handled,
        "taken over from the cursor"
    );
    assert!(told(&ntfy).is_empty(), "{:?}", told(&ntfy));
    other.stop().await;
}
