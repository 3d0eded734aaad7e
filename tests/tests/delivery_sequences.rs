//! The delivery machine's sequences against a real server (issue 45, the
//! design step): what `core/tests/delivery_model.rs` drives through the
//! pure `transition`, here driven through HTTP. Each case is a fresh
//! bundle, with or without a resume target; the asking agent waits, polls,
//! goes away without a word, or detaches, in a random order; then a person
//! answers or declines. What the server does must be what
//! `clarify_core::delivery::route` says for what it could know at the
//! claim, and every path keeps the invariants: an answer reaches its agent
//! once (resumed at most once, never also handed to a wait), a decline's
//! reason travels with it, and a second answer changes nothing.
//!
//! Seeded: `CLARIFY_SEQUENCE_SEED=n` replays a failing run (the seed is
//! printed on every run).

use clarify_core::delivery::{Facts, Route, route};
use clarify_tests::{Receiver, TestServer};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Sequences per run: each costs a few round trips on one shared server.
const CASES: usize = 32;

/// What the agent does before the claim.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// A long wait, left running.
    Wait,
    /// A poll that finds nothing (`timeout=0`).
    Poll,
    /// A long wait whose client goes away without a word.
    GoAway,
    /// Its running waits are cancelled and it says it moved on.
    Detach,
}

/// splitmix64: a seedable stream with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn seed() -> u64 {
    std::env::var("CLARIFY_SEQUENCE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

fn question() -> Value {
    json!([{"prompt": "Ship it?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

const REASON: &str = "not before the release";

fn claim(declined: bool) -> Value {
    if declined {
        json!({"rejected": true, "reject_reason": REASON})
    } else {
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "go"}]})
    }
}

/// The outcome the agent must be told, whichever way it reaches it.
fn assert_outcome(got: &Value, declined: bool, context: &str) {
    if declined {
        assert_eq!(got["response"]["rejected"], true, "{context}: {got}");
        assert_eq!(
            got["response"]["reject_reason"], REASON,
            "{context}: a decline's reason travels with it: {got}"
        );
    } else {
        assert_eq!(
            got["response"]["answers"][0]["custom_text"], "go",
            "{context}: {got}"
        );
    }
}

async fn view(server: &TestServer, pending: &str) -> Value {
    let (status, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(status, 200, "{view}");
    view
}

/// A long wait of the agent's, once the server counts it as attached.
async fn attached_wait(
    server: &TestServer,
    pending: &str,
    agent: &str,
) -> JoinHandle<(u16, Value)> {
    let url = server.url(&format!("/api/v1/clarification/{pending}/wait?timeout=30"));
    let request = server.client().get(url).bearer_auth(agent);
    let handle = tokio::spawn(async move {
        let response = request.send().await.expect("the wait");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    });
    let mut last = Value::Null;
    let attached = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            last = view(server, pending).await;
            if last["agent_waiting"] == true {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(attached.is_ok(), "the wait attached: {last}");
    handle
}

async fn poll(server: &TestServer, pending: &str, agent: &str) -> (u16, Value) {
    server
        .as_token(agent)
        .get(&format!("/clarification/{pending}/wait?timeout=0"))
        .await
}

/// One sequence; returns the route the machine said it takes.
async fn case(server: &TestServer, receiver: &Receiver, rng: &mut Rng) -> Route {
    let has_target = rng.below(2) == 0;
    let (_, session, agent) = if has_target {
        server.session_resumed_by(receiver).await
    } else {
        server.session(None).await
    };
    let pending = server.ask(&session, &agent, question()).await;
    let steps: Vec<Step> = (0..rng.below(4))
        .map(|_| match rng.below(4) {
            0 => Step::Wait,
            1 => Step::Poll,
            2 => Step::GoAway,
            _ => Step::Detach,
        })
        .collect();
    let declined = rng.below(2) == 0;
    let told = format!("target {has_target}, steps {steps:?}, declined {declined}");

    // What the claim can know: the agent waits or was seen moments ago
    // (the grace outlasts a case), unless it detached since.
    let mut attached = false;
    let mut running: Vec<JoinHandle<(u16, Value)>> = Vec::new();
    for step in &steps {
        match step {
            Step::Wait => {
                running.push(attached_wait(server, &pending, &agent).await);
                attached = true;
            }
            Step::Poll => {
                let (status, got) = poll(server, &pending, &agent).await;
                assert_eq!(status, 504, "{told}: nothing yet: {got}");
                attached = true;
            }
            Step::GoAway => {
                attached_wait(server, &pending, &agent).await.abort();
                attached = true;
            }
            Step::Detach => {
                running.drain(..).for_each(|wait| wait.abort());
                let (status, got) = server
                    .as_token(&agent)
                    .post(&format!("/clarification/{pending}/detach"), &json!({}))
                    .await;
                assert!(status < 300, "{told}: detached: {got}");
                attached = false;
            }
        }
    }
    let expected = route(Facts {
        polled: false,
        attached,
        declined,
        has_target,
    });

    let resumed_before = receiver.count();
    let (status, won) = server.respond(&pending, &claim(declined)).await;
    assert_eq!(
        (status, &won["claimed"]),
        (200, &json!(true)),
        "{told}: {won}"
    );
    let resumed = receiver.count() - resumed_before;
    match expected {
        Route::Resume => {
            assert_eq!(resumed, 1, "{told}: resumed once");
            assert_eq!(receiver.last()["pending_id"], pending.as_str(), "{told}");
            assert_eq!(view(server, &pending).await["awaiting_pickup"], false);
        }
        Route::Live => {
            assert_eq!(resumed, 0, "{told}: handed live, never resumed as well");
            for wait in running.drain(..) {
                let (status, got) = wait.await.expect("the wait ends");
                assert_eq!(status, 200, "{told}: the running wait is told: {got}");
                assert_outcome(&got, declined, &told);
            }
        }
        Route::Keep => {
            assert_eq!(resumed, 0, "{told}: kept, not resumed");
            assert_eq!(
                view(server, &pending).await["awaiting_pickup"],
                true,
                "{told}: kept for the agent to collect"
            );
        }
        Route::Store => assert_eq!(resumed, 0, "{told}: a decline is never resumed"),
    }
    assert!(running.is_empty(), "{told}: a wait ran while not attached");

    // Whichever way it went, the agent's next look tells it, and nothing
    // is left for pickup; a second answer changes nothing.
    let (status, got) = poll(server, &pending, &agent).await;
    assert_eq!(status, 200, "{told}: the agent's look: {got}");
    assert_outcome(&got, declined, &told);
    assert_eq!(
        view(server, &pending).await["awaiting_pickup"],
        false,
        "{told}: delivered"
    );
    let (_, again) = server.respond(&pending, &claim(!declined)).await;
    assert_eq!(again["claimed"], false, "{told}: {again}");
    assert_eq!(
        receiver.count() - resumed_before,
        resumed,
        "{told}: no second delivery"
    );
    expected
}

#[tokio::test]
async fn random_sequences_against_the_server_take_the_route_the_machine_says() {
    let seed = seed();
    println!("CLARIFY_SEQUENCE_SEED={seed}");
    let mut rng = Rng(seed);
    let receiver = Receiver::start().await;
    let server = TestServer::start().await;
    let mut routes = std::collections::BTreeMap::new();
    for _ in 0..CASES {
        let taken = case(&server, &receiver, &mut rng).await;
        *routes.entry(format!("{taken:?}")).or_insert(0) += 1;
    }
    println!("{CASES} sequences, by route: {routes:?}");
    server.stop().await;
}
