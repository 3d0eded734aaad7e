//! Operator webhooks (issue 18): a notice when a bundle waits, is resolved
//! or expires, a reminder before it expires; retried with backoff, queued
//! in the database so a restart loses nothing, sent with an
//! `Idempotency-Key` so the receiver keeps each once, and queued once
//! however many replicas run. Each workspace's owner may add a webhook;
//! every target is held to the resume webhooks' network policy.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::{NoticeSink, TestDatabase, TestServer};
use serde_json::{Value, json};

fn questions() -> Value {
    json!([{"prompt": "Ship **now**?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

fn answer() -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
}

fn notifying(sink: &NoticeSink) -> Config {
    Config {
        notify_webhooks: vec![sink.url()],
        notify_first_retry: Some(Duration::from_millis(300)),
        public_url: Some("https://clarify.example/".into()),
        ..Config::default()
    }
}

/// Asks as a new session's agent, expiring after `expires` seconds if given.
async fn ask(server: &TestServer, expires: Option<u64>) -> (String, String) {
    let (pending, task, _) = server.ask_expiring(questions(), expires).await;
    (pending, task)
}

#[tokio::test]
async fn a_notice_outlasts_two_refusals_and_a_restart_and_is_kept_once() {
    let sink = NoticeSink::start(2).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let (pending, task) = ask(&server, None).await;
    let waiting = format!("{pending}:waiting");
    sink.wait_until(Duration::from_secs(30), |all| {
        all.iter().filter(|d| d.key == waiting).count() >= 2
    })
    .await;
    // Both refused; the third try is due 600 ms later, after the restart.
    assert_eq!(sink.count(&waiting), (2, 0));
    let server = server.restart().await;

    let body = sink.accepted(&waiting).await;
    assert_eq!(
        sink.count(&waiting),
        (3, 1),
        "retried until accepted, then not again"
    );
    clarify_tests::assert_notice_keys(&body);
    assert_eq!(body["event"], "waiting");
    assert_eq!(body["pending_id"], pending.as_str());
    assert_eq!(body["task"], "a task");
    assert_eq!(body["questions"], json!(["Ship **now**?"]));
    let link = format!("https://clarify.example/t/{task}");
    assert_eq!(body["url"], link.as_str(), "links use --public-url");
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("a task") && text.ends_with(&link), "{text}");
    assert_eq!(body["answered_by"], Value::Null);

    let (status, _) = server.respond(&pending, &answer()).await;
    assert_eq!(status, 200);
    let resolved = sink.accepted(&format!("{pending}:resolved")).await;
    assert_eq!(resolved["event"], "resolved");
    assert_eq!(resolved["answered_by"]["channel"], "rest");
    assert!(
        resolved["text"]
            .as_str()
            .unwrap()
            .starts_with("Answered by anonymous"),
        "{resolved}"
    );
    assert_eq!(sink.count(&format!("{pending}:resolved")), (1, 1));
    assert_eq!(sink.count(&waiting), (3, 1));
}

#[tokio::test]
async fn replicas_queue_and_send_each_notice_once() {
    // Refusals make retries that both replicas find due at once.
    let sink = NoticeSink::start(16).await;
    let first = TestServer::start_with(notifying(&sink)).await;
    let second = first.replica().await;
    let mut pending = Vec::new();
    for round in 0..24 {
        let server = if round % 2 == 0 { &first } else { &second };
        pending.push(ask(server, None).await.0);
    }
    for (round, id) in pending.iter().enumerate() {
        let server = if round % 2 == 0 { &second } else { &first };
        assert_eq!(server.respond(id, &answer()).await.0, 200);
    }
    for id in &pending {
        sink.accepted(&format!("{id}:waiting")).await;
        sink.accepted(&format!("{id}:resolved")).await;
    }
    // Every replica looks for due rows; each try was made by one of them,
    // and each notice accepted once.
    let tries = sink.deliveries().len();
    for id in &pending {
        for event in ["waiting", "resolved"] {
            assert_eq!(sink.count(&format!("{id}:{event}")).1, 1, "{id}:{event}");
        }
    }
    assert_eq!(
        tries,
        2 * pending.len() + 16,
        "one try per notice, and one per refusal"
    );
}

#[tokio::test]
async fn a_reminder_goes_out_once_before_expiry_and_never_for_an_answered_question() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let (answered, _) = ask(&server, Some(2)).await;
    assert_eq!(server.respond(&answered, &answer()).await.0, 200);
    let (expiring, _) = ask(&server, Some(3)).await;

    let expired = sink.accepted(&format!("{expiring}:expired")).await;
    assert_eq!(expired["event"], "expired");
    let reminder = sink.accepted(&format!("{expiring}:reminder")).await;
    assert_eq!(reminder["event"], "reminder");
    // Issue 28: the reminder carries the waiting notice's answer links.
    let waiting = sink.accepted(&format!("{expiring}:waiting")).await;
    assert_eq!(waiting["actions"].as_array().map(Vec::len), Some(2));
    assert_eq!(reminder["actions"], waiting["actions"]);
    assert!(!reminder["expires_at"].as_str().unwrap().is_empty());
    let text = reminder["text"].as_str().unwrap();
    assert!(
        text.starts_with("Reminder: an agent is still waiting"),
        "{text}"
    );
    let order: Vec<String> = sink.deliveries().into_iter().map(|d| d.key).collect();
    let at = |key: String| order.iter().position(|k| *k == key).unwrap();
    assert!(at(format!("{expiring}:reminder")) < at(format!("{expiring}:expired")));
    assert_eq!(sink.count(&format!("{expiring}:reminder")), (1, 1));
    // The answered question's reminder came due (at 1.6 s) well before the
    // other one expired (after 3 s), and was dropped, not sent.
    assert_eq!(sink.count(&format!("{answered}:reminder")), (0, 0));
}

#[tokio::test]
async fn a_workspace_owner_adds_a_webhook_for_that_workspace_only() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(Config {
        auth: true,
        allowed_webhook_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..Config::default()
    })
    .await;
    let (alice, bob) = (server.token("alice").await, server.token("bob").await);
    let owner = server.as_token(&alice);
    let (_, workspace) = owner.post("/workspaces", &json!({"name": "ops"})).await;
    let workspace = workspace["id"].as_str().unwrap().to_owned();
    let path = format!("/workspaces/{workspace}/notify");
    let set = json!({"webhook_url": sink.url()});

    let (status, body) = owner.get(&path).await;
    assert_eq!((status, &body["webhook_url"]), (200, &json!("")), "{body}");
    assert_eq!(server.as_token(&bob).put(&path, &set).await.0, 404);
    assert_eq!(server.as_token(&bob).get(&path).await.0, 404);
    assert_eq!(server.api().put(&path, &set).await.0, 401);
    for (bad, code, why) in [
        (
            json!({"webhook_url": "ftp://example.com/x"}),
            400,
            "webhook_url",
        ),
        (
            json!({"webhook_url": "http://10.1.2.3/x"}),
            400,
            "webhook_url",
        ),
        (json!({"webhook_url": sink.url(), "extra": 1}), 422, "extra"),
        // Found by Schemathesis: the URL parser would percent-encode an
        // inner space and store some other URL than the one pasted.
        (
            json!({"webhook_url": "\u{2002}http://example.com/x?a!\u{2002}*"}),
            400,
            "webhook_url: '\\u{2002}' is not allowed",
        ),
        (
            json!({"webhook_url": "http://example.com/a b"}),
            400,
            "webhook_url: ' ' is not allowed",
        ),
        (
            json!({"webhook_url": "http://exämple.com/"}),
            400,
            "webhook_url: 'ä' is not allowed",
        ),
        // Schemathesis again: a host the parser takes, no DNS name holds.
        (
            json!({"webhook_url": "http://example.co*"}),
            400,
            "webhook_url: must be an http:// or https:// URL with a host name",
        ),
        (
            json!({"webhook_url": "http://exa_mple.com/"}),
            400,
            "webhook_url: must be an http:// or https:// URL with a host name",
        ),
        // Each a URL the parser would take, none the document allows.
        (
            json!({"webhook_url": "http://user:pw@example.com/"}),
            400,
            "webhook_url: must be an http:// or https:// URL with a host name",
        ),
        (
            json!({"webhook_url": "http:\\\\example.com\\x"}),
            400,
            "webhook_url: must be an http:// or https:// URL with a host name",
        ),
        (
            json!({"webhook_url": "http://example.com:65536/"}),
            400,
            "webhook_url: must be an http:// or https:// URL with a host name",
        ),
    ] {
        let (status, body) = owner.put(&path, &bad).await;
        assert_eq!(status, code, "{bad}: {body}");
        assert!(body["error"].as_str().unwrap().contains(why), "{body}");
    }
    // Names with a label that starts with a digit, and address literals,
    // are URLs too (the policy judges addresses: auth is off here).
    for good in [
        "http://163.com/hook",
        "https://1password.example:8443/x",
        "http://[2001:db8::1]:8080/",
    ] {
        let (status, body) = owner.put(&path, &json!({"webhook_url": good})).await;
        assert_eq!(
            (status, body["webhook_url"].as_str()),
            (200, Some(good)),
            "{body}"
        );
    }
    // Surrounding white space is trimmed, not refused.
    let padded = json!({"webhook_url": format!(" \t{}\u{2002}\n", sink.url())});
    let (status, body) = owner.put(&path, &padded).await;
    assert_eq!(
        (status, &body["webhook_url"]),
        (200, &json!(sink.url())),
        "{body}"
    );
    let (status, body) = owner.put(&path, &set).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"workspace_id": workspace, "webhook_url": sink.url(), "slack_channel": "",
            "discord_channel": ""})
    );
    assert_eq!(owner.get(&path).await.1, body);

    // An agent token is refused, even its own workspace's.
    let (_, session, agent) = owner.session_in(&workspace, None).await;
    assert_eq!(server.as_token(&agent).put(&path, &set).await.0, 403);

    let (_, elsewhere, other_agent) = owner.session(None).await;
    let outside = server
        .as_token(&other_agent)
        .ask(&elsewhere, questions())
        .await;
    let inside = server.as_token(&agent).ask(&session, questions()).await;
    let notice = sink.accepted(&format!("{inside}:waiting")).await;
    assert_eq!(notice["pending_id"], inside.as_str());
    assert_eq!(sink.count(&format!("{outside}:waiting")), (0, 0));

    let (status, body) = owner.put(&path, &json!({"webhook_url": null})).await;
    assert_eq!((status, &body["webhook_url"]), (200, &json!("")), "{body}");
    assert_eq!(owner.get(&path).await.1["webhook_url"], "");
}

#[tokio::test]
async fn an_internal_notify_webhook_is_refused_at_start_under_auth() {
    let database = TestDatabase::create().await;
    let db = clarify_server::db::Db::connect(database.url())
        .await
        .unwrap();
    let config = Config {
        auth: true,
        notify_webhooks: vec!["http://127.0.0.1:9/hook".into()],
        ..Config::default()
    };
    let error = clarify_server::AppState::new(db, config).await.unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("--notify-webhook:"), "{message}");
    assert!(message.contains("--allow-webhook-network"), "{message}");
}
