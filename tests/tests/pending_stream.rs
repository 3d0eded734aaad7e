//! `GET /api/v1/pending/stream` (issue 18): Server-Sent Events of bundles
//! that start or stop waiting, starting with what waits now, scoped to
//! what the reader may see.

use std::pin::Pin;
use std::time::Duration;

use clarify_tests::TestServer;
use futures_util::{Stream, StreamExt as _};
use serde_json::{Value, json};

type Bytes = Pin<Box<dyn Stream<Item = reqwest::Result<Vec<u8>>> + Send>>;

/// A reader of the stream, one event at a time.
struct Follower {
    body: Bytes,
    buffer: String,
}

impl Follower {
    async fn open(server: &TestServer, token: Option<&str>) -> Result<Self, u16> {
        let mut request = server.client().get(server.url("/api/v1/pending/stream"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        if response.status() != 200 {
            return Err(response.status().as_u16());
        }
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Ok(Self {
            body: Box::pin(
                response
                    .bytes_stream()
                    .map(|chunk| chunk.map(|b| b.to_vec())),
            ),
            buffer: String::new(),
        })
    }

    /// The next event's name and data (keep-alive comments skipped).
    async fn next(&mut self) -> (String, Value) {
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let Some(end) = self.buffer.find("\n\n") {
                    let frame: String = self.buffer.drain(..end + 2).collect();
                    let mut name = String::new();
                    let mut data = String::new();
                    for line in frame.lines() {
                        if let Some(value) = line.strip_prefix("event:") {
                            name = value.trim().to_owned();
                        } else if let Some(value) = line.strip_prefix("data:") {
                            data.push_str(value.trim_start());
                        }
                    }
                    if !name.is_empty() {
                        return (name, serde_json::from_str(&data).unwrap());
                    }
                    continue;
                }
                let chunk = self.body.next().await.expect("stream open").unwrap();
                self.buffer.push_str(&String::from_utf8_lossy(&chunk));
            }
        })
        .await
        .expect("an event within 10 s")
    }
}

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no"}]}])
}

#[tokio::test]
async fn the_stream_starts_with_what_waits_then_follows_each_change_once() {
    let server = TestServer::start().await;
    let (task, session, agent) = server.session(None).await;
    let first = server
        .ask(&session, &agent, question("Asked before?"))
        .await;

    let mut follower = Follower::open(&server, None).await.unwrap();
    let (name, notice) = follower.next().await;
    assert_eq!(name, "waiting");
    clarify_tests::assert_notice_keys(&notice);
    assert_eq!(notice["pending_id"], first.as_str());
    assert_eq!(notice["questions"], json!(["Asked before?"]));
    assert_eq!(notice["answered_by"], Value::Null);
    let url = notice["url"].as_str().unwrap();
    assert!(url.ends_with(&format!("/t/{task}")), "{url}");
    assert!(
        notice["text"].as_str().unwrap().contains(url),
        "the line links to where to answer: {notice}"
    );

    let (_, other_session, other_agent) = server.session(None).await;
    let second = server
        .ask(
            &other_session,
            &other_agent,
            question("Asked while following?"),
        )
        .await;
    let (name, notice) = follower.next().await;
    assert_eq!(
        (name.as_str(), &notice["pending_id"]),
        ("waiting", &json!(second))
    );

    // Issue 28: a one-question bundle's notice links each option; the
    // stream's links say they came by the stream.
    let actions = notice["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 2, "{notice}");
    let tap = actions[1]["url"].as_str().unwrap();
    let tap = &tap[tap.find("/answer/").expect("an answer link")..];
    let pressed = server.client().post(server.url(tap)).send().await.unwrap();
    assert_eq!(pressed.status(), 200);
    let (name, notice) = follower.next().await;
    assert_eq!(
        (name.as_str(), &notice["pending_id"]),
        ("resolved", &json!(second))
    );
    assert_eq!(
        notice["answered_by"],
        json!({"user": "anonymous", "channel": "link", "client": "stream"})
    );

    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&first, &answer).await.0, 200);
    let (name, notice) = follower.next().await;
    assert_eq!(
        (name.as_str(), &notice["pending_id"]),
        ("resolved", &json!(first))
    );
    assert_eq!(
        notice["answered_by"],
        json!({"user": "anonymous", "channel": "rest", "client": ""})
    );

    let third = server
        .ask(&other_session, &other_agent, question("Asked third?"))
        .await;
    let (name, _) = follower.next().await;
    assert_eq!(name, "waiting");
    let (status, _) = server
        .post(&format!("/clarification/{third}/cancel"), &json!({}))
        .await;
    assert!(status < 300);
    // Exactly once each: the answer's later writes announce nothing new.
    let (name, notice) = follower.next().await;
    assert_eq!(
        (name.as_str(), &notice["pending_id"]),
        ("cancelled", &json!(third))
    );
    server.stop().await;
}

#[tokio::test]
async fn under_auth_each_reader_follows_only_what_they_may_see() {
    let server = TestServer::start_with_auth().await;
    assert_eq!(Follower::open(&server, None).await.err(), Some(401));
    let mut workspaces = Vec::new();
    let mut followers = Vec::new();
    for name in ["alice", "bob"] {
        let token = server.token(name).await;
        let (status, workspace) = server
            .as_token(&token)
            .post("/workspaces", &json!({"name": format!("{name}'s")}))
            .await;
        assert_eq!(status, 201, "{workspace}");
        followers.push(Follower::open(&server, Some(&token)).await.unwrap());
        workspaces.push((token, workspace["id"].as_str().unwrap().to_owned()));
    }
    let mut asked = Vec::new();
    for (token, workspace) in &workspaces {
        let (_, session, agent) = server.as_token(token).session_in(workspace, None).await;
        asked.push(server.ask(&session, &agent, question("Mine?")).await);
    }
    // Each reader's first event is their own question, never the other's.
    for (follower, pending) in followers.iter_mut().zip(&asked) {
        let (name, notice) = follower.next().await;
        assert_eq!(
            (name.as_str(), &notice["pending_id"]),
            ("waiting", &json!(pending))
        );
    }
    let (_, session, agent) = server
        .as_token(&workspaces[0].0)
        .session_in(&workspaces[0].1, None)
        .await;
    assert_eq!(
        Follower::open(&server, Some(&agent)).await.err(),
        Some(403),
        "agents ask and wait; {session}"
    );
    server.stop().await;
}

#[tokio::test]
async fn streams_share_the_event_connection_cap() {
    let server = TestServer::start_with(clarify_server::Config {
        ws_per_user: Some(2),
        ..clarify_server::Config::default()
    })
    .await;
    let first = Follower::open(&server, None).await.unwrap();
    let _second = Follower::open(&server, None).await.unwrap();
    assert_eq!(
        Follower::open(&server, None).await.err(),
        Some(429),
        "a third stream is over the cap"
    );
    // A closed stream frees its place.
    drop(first);
    let reopened = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(follower) = Follower::open(&server, None).await {
                return follower;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(reopened.is_ok(), "the place came back");
    server.stop().await;
}
