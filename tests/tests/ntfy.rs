//! ntfy (issue 28, item 2): `--notify-ntfy` publishes each notice to an
//! ntfy topic as JSON (to the server's root, naming the topic), with an
//! `http` action per option, so a phone answers in one tap. Since issue 48
//! the action publishes the option's token to the topic's reply topic,
//! which Clarify reads (tests/tests/ntfy_replies.rs). The fake ntfy is
//! [`NtfyFake`]; a tap is the request the action describes, sent as the
//! phone's app sends it.

use std::time::Duration;

use clarify_server::{Config, Secret};
use clarify_tests::{NtfyFake, TestServer};
use serde_json::{Value, json};

fn phone(sink: &NtfyFake, token: Option<&str>) -> Config {
    Config {
        notify_ntfy: vec![sink.topic_url("clarify-alice")],
        ntfy_token: token.map(|t| Secret(t.to_owned())),
        notify_first_retry: Some(Duration::from_millis(300)),
        ..Config::default()
    }
}

/// Sends the request an ntfy `http` action describes, as the app does: its
/// method, URL, headers and body, no cookie, no `Origin`.
async fn tap(action: &Value) -> u16 {
    assert_eq!(action["action"], "http", "{action}");
    let method = action["method"].as_str().unwrap().parse().unwrap();
    let mut request = reqwest::Client::new().request(method, action["url"].as_str().unwrap());
    if let Some(headers) = action["headers"].as_object() {
        for (name, value) in headers {
            request = request.header(name, value.as_str().unwrap());
        }
    }
    let body = action["body"].as_str().unwrap_or_default().to_owned();
    request
        .body(body)
        .send()
        .await
        .expect("the link's server is reachable")
        .status()
        .as_u16()
}

#[tokio::test]
async fn a_phone_notification_answers_in_one_tap() {
    let sink = NtfyFake::start(1).await;
    let server = TestServer::start_with(phone(&sink, Some("tk_phone"))).await;
    let questions = json!([{"prompt": "Deploy to <prod>?",
        "options": [{"label": "Deploy"}, {"label": "Hold"}]}]);
    let (pending, task, _) = server.ask_expiring(questions, None).await;

    // Refused once, retried like any notice.
    let waiting = format!("{pending}:waiting");
    let message = sink.accepted(&waiting).await;
    assert_eq!(sink.refused(), 1);
    let delivery = sink
        .messages()
        .into_iter()
        .find(|d| d.key == waiting)
        .unwrap();
    assert!(
        delivery.json.is_object(),
        "published as JSON to ntfy's root"
    );
    assert_eq!(delivery.authorization, "Bearer tk_phone");
    assert_eq!(message["topic"], "clarify-alice");
    assert_eq!(message["title"], "An agent is waiting: a task");
    assert_eq!(
        message["message"], "Deploy to <prod>?",
        "plain text, as typed"
    );
    assert_eq!(message["click"], server.url(&format!("/t/{task}")));
    let actions = message["actions"].as_array().expect("actions");
    assert_eq!(
        actions
            .iter()
            .map(|a| a["label"].clone())
            .collect::<Vec<_>>(),
        [json!("Deploy"), json!("Hold")]
    );
    assert!(
        actions
            .iter()
            .all(|a| a["method"] == "POST" && a["clear"] == true)
    );

    // issue 48: the tap publishes to the reply topic, which Clarify reads.
    assert_eq!(tap(&actions[1]).await, 200);
    let resolved = sink.accepted(&format!("{pending}:resolved")).await;
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["status"], "answered");
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert_eq!(
        view["answered_by"],
        json!({"user": "anonymous", "channel": "link", "client": "ntfy"})
    );
    // A second tap (the other button, on another phone) changes nothing.
    assert_eq!(tap(&actions[0]).await, 200);
    sink.wait_until(Duration::from_secs(30), |m, _| {
        m.iter().any(|m| m.json["title"] == "Too late: a task")
    })
    .await;
    let (_, again) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(again["response"], view["response"]);

    assert_eq!(resolved["title"], "Answered: a task");
    assert_eq!(
        resolved["message"],
        "Answered by anonymous through an answer link: Deploy to <prod>?"
    );
    assert_eq!(resolved["actions"], json!([]));
    server.stop().await;
}

#[tokio::test]
async fn without_a_token_none_is_sent_two_questions_open_the_overlay_and_a_bad_topic_is_refused() {
    let sink = NtfyFake::start(0).await;
    let server = TestServer::start_with(phone(&sink, None)).await;
    let (pending, _, _) = server
        .ask_expiring(json!([{"prompt": "Two?", "options": [{"label": "a"}, {"label": "b"}]},
                             {"prompt": "Questions?", "options": [{"label": "c"}, {"label": "d"}]}]), None)
        .await;
    let message = sink.accepted(&format!("{pending}:waiting")).await;
    assert_eq!(message["message"], "Two? (+1 more)");
    assert_eq!(
        message["actions"],
        json!([]),
        "a bundle of two opens the overlay"
    );
    assert_eq!(sink.messages()[0].authorization, "");
    server.stop().await;

    let database = clarify_tests::TestDatabase::create().await;
    for bad in [
        "https://ntfy.example/",
        "ntfy.example/topic",
        "https://ntfy.example/t?x=1",
    ] {
        let db = clarify_server::db::Db::connect(database.url())
            .await
            .unwrap();
        let refused = clarify_server::AppState::new(
            db,
            Config {
                notify_ntfy: vec![bad.to_owned()],
                ..Config::default()
            },
        )
        .await;
        let error = refused.expect_err(bad).to_string();
        assert!(error.contains("--notify-ntfy"), "{bad}: {error}");
    }
}
