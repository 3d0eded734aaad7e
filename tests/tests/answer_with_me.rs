//! Answering inside a person's own MCP client (issue 30 item 1):
//! `answer_with_me_kandev` shows each waiting bundle as a form, in the
//! initialize era (`elicitation/create` during the call) and the
//! 2026-07-28 era (MRTR: `input_required` rounds with a sealed
//! `requestState`), and every answer goes through the one claim (N2, R3).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use clarify_tests::TestServer;
use clarify_tests::forms::{Fill, accept, connect, decline};
use clarify_tests::mcp::{CLIENT_NAME, connect as connect_plain};
use futures_util::FutureExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use serde_json::{Value, json};

const TOOL: &str = "answer_with_me_kandev";

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]}])
}

/// A person who answers each form with what `answer` says of its message.
fn person(answer: impl Fn(&str) -> rmcp::model::ElicitResult + Send + Sync + 'static) -> Fill {
    Arc::new(move |form: Value| {
        let result = answer(form["message"].as_str().unwrap_or_default());
        async move { result }.boxed()
    })
}

/// Calls the tool through the client's own `call_tool`, which drives MRTR
/// rounds (the shared `mcp::call` goes through the bare peer, which does not).
async fn call(client: &clarify_tests::forms::FormClient, args: Value) -> CallToolResult {
    let arguments = args.as_object().unwrap().clone();
    client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(arguments))
        .await
        .expect("tool call")
}

fn results(result: &CallToolResult) -> Vec<Value> {
    assert_ne!(result.is_error, Some(true), "{:?}", result.content);
    result.structured_content.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone()
}

async fn view(server: &TestServer, pending_id: &str) -> Value {
    server.get(&format!("/clarification/{pending_id}")).await.1
}

async fn a_form_per_bundle_and_the_one_claim(modern: bool) {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let first = server
        .ask(&session, &agent, question("Which database for billing?"))
        .await;
    let (_, session, agent) = server.session(None).await;
    let second = server
        .ask(&session, &agent, question("Which database for search?"))
        .await;
    let client = connect(
        &server.url("/mcp"),
        None,
        modern,
        person(|message| {
            if message.contains("billing") {
                accept(json!({"q1": "q1_opt2", "q1_text": "it scales"}))
            } else {
                decline()
            }
        }),
    )
    .await;

    let done = results(&call(&client, json!({})).await);
    assert_eq!(done.len(), 2, "{done:?}");
    assert_eq!(
        (done[0]["pending_id"].as_str(), done[0]["outcome"].as_str()),
        (Some(first.as_str()), Some("answered"))
    );
    assert_eq!(
        done[0]["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    // Dismissing a form skips the bundle: it still waits.
    assert_eq!(
        (done[1]["pending_id"].as_str(), done[1]["outcome"].as_str()),
        (Some(second.as_str()), Some("skipped"))
    );
    let answered = view(&server, &first).await;
    assert_eq!(answered["status"], "answered", "{answered}");
    assert_eq!(
        answered["response"]["answers"][0]["custom_text"],
        "it scales"
    );
    assert_eq!(answered["answered_by"]["channel"], "mcp");
    assert_eq!(answered["answered_by"]["client"], CLIENT_NAME);
    assert_eq!(view(&server, &second).await["active"], true);

    // The form: the prompt in the message, each option by its label.
    let form = &client.service().seen()[0];
    assert!(
        form["message"]
            .as_str()
            .unwrap()
            .contains("Which database for billing?"),
        "{form}"
    );
    let choice = &form["requestedSchema"]["properties"]["q1"];
    assert_eq!(
        choice["oneOf"][1],
        json!({"const": "q1_opt2", "title": "PostgreSQL"})
    );

    // One bundle by name; a declined question says why.
    let client = connect(
        &server.url("/mcp"),
        None,
        modern,
        person(|_| accept(json!({"decline": true, "decline_reason": "not mine to say"}))),
    )
    .await;
    let done = results(&call(&client, json!({"pending_id": second})).await);
    assert_eq!(done[0]["outcome"], "answered", "{done:?}");
    // The reason reaches the agent; a later read is a replay without it (R2b).
    assert_eq!(done[0]["response"]["reject_reason"], "not mine to say");
    assert_eq!(view(&server, &second).await["status"], "rejected");
    // Nothing waits now.
    let nothing = call(&client, json!({})).await;
    assert!(results(&nothing).is_empty());
    server.stop().await;
}

#[tokio::test]
async fn initialize_era_a_form_per_bundle_through_the_one_claim() {
    a_form_per_bundle_and_the_one_claim(false).await;
}

#[tokio::test]
async fn mrtr_era_a_form_per_bundle_through_the_one_claim() {
    a_form_per_bundle_and_the_one_claim(true).await;
}

async fn a_form_that_cannot_be_sent_is_asked_again_with_why(modern: bool) {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, question("Which one?")).await;
    let tries = Arc::new(Mutex::new(0));
    let counted = tries.clone();
    let client = connect(
        &server.url("/mcp"),
        None,
        modern,
        person(move |_| {
            let mut n = counted.lock().unwrap();
            *n += 1;
            if *n == 1 {
                accept(json!({"q1": "q1_opt9"}))
            } else {
                accept(json!({"q1": "q1_opt1"}))
            }
        }),
    )
    .await;
    let done = results(&call(&client, json!({})).await);
    assert_eq!(done[0]["outcome"], "answered", "{done:?}");
    let forms = client.service().seen();
    assert_eq!(forms.len(), 2);
    let again = forms[1]["message"].as_str().unwrap();
    assert!(
        again.starts_with("Not sent: ") && again.contains("q1_opt9"),
        "{again}"
    );
    assert_eq!(
        view(&server, &pending).await["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1"])
    );
    server.stop().await;
}

#[tokio::test]
async fn initialize_era_a_form_that_cannot_be_sent_is_asked_again() {
    a_form_that_cannot_be_sent_is_asked_again_with_why(false).await;
}

#[tokio::test]
async fn mrtr_era_a_form_that_cannot_be_sent_is_asked_again() {
    a_form_that_cannot_be_sent_is_asked_again_with_why(true).await;
}

/// R3 through forms: while the person fills in the form, a REST answer
/// races theirs. Exactly one wins; the loser is told the winner's answer.
async fn a_race_against_rest_has_one_winner(modern: bool) {
    let server = Arc::new(TestServer::start().await);
    for round in 0..20u8 {
        let (_, session, agent) = server.session(None).await;
        let pending = server
            .ask(&session, &agent, question(&format!("Race {round}?")))
            .await;
        let rest = Arc::new(tokio::sync::Mutex::new(None));
        let (racer, slot, id) = (server.clone(), rest.clone(), pending.clone());
        let fill: Fill = Arc::new(move |_| {
            let (racer, slot, id) = (racer.clone(), slot.clone(), id.clone());
            let round = u64::from(round);
            async move {
                // REST answers at the same moment the form is sent back.
                let mut held = slot.lock().await;
                *held = Some(tokio::spawn(async move {
                    // Staggered across rounds so that each side wins some
                    // (the form's answer has a hop more to make): of 40
                    // rounds measured, the form won 31 and REST 9.
                    tokio::time::sleep(std::time::Duration::from_micros(round * 400)).await;
                    let body = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
                    racer.respond(&id, &body).await
                }));
                accept(json!({"q1": "q1_opt2"}))
            }
            .boxed()
        });
        let client = connect(&server.url("/mcp"), None, modern, fill).await;
        let done = results(&call(&client, json!({})).await);
        let (status, body) = rest.lock().await.take().unwrap().await.unwrap();
        assert_eq!(status, 200, "{body}");
        let form_won = done[0]["outcome"] == "answered";
        assert_ne!(
            form_won,
            body["claimed"] == true,
            "one winner: {done:?} {body}"
        );
        // Each side sees the one winning answer.
        assert_eq!(
            done[0]["response"]["answers"], body["response"]["answers"],
            "{done:?} {body}"
        );
        let winner = if form_won { "q1_opt2" } else { "q1_opt1" };
        assert_eq!(
            view(&server, &pending).await["response"]["answers"][0]["selected_options"],
            json!([winner])
        );
    }
}

#[tokio::test]
async fn initialize_era_a_race_against_rest_has_one_winner() {
    a_race_against_rest_has_one_winner(false).await;
}

#[tokio::test]
async fn mrtr_era_a_race_against_rest_has_one_winner() {
    a_race_against_rest_has_one_winner(true).await;
}

fn error_text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The round's `requestState` and its form's key, from a first call.
async fn first_round(client: &clarify_tests::forms::FormClient, args: Value) -> (String, String) {
    let params = CallToolRequestParams::new(TOOL).with_arguments(args.as_object().unwrap().clone());
    match client.call_tool_once(params).await.unwrap() {
        CallToolResponse::InputRequired(round) => {
            let key = round.input_requests.unwrap().into_keys().next().unwrap();
            (round.request_state.unwrap(), key)
        }
        other => panic!("expected input_required, got {other:?}"),
    }
}

async fn retry(
    client: &clarify_tests::forms::FormClient,
    state: &str,
    key: &str,
    content: Value,
) -> CallToolResult {
    let responses = BTreeMap::from([(
        key.to_owned(),
        serde_json::to_value(accept(content)).unwrap(),
    )]);
    let params = CallToolRequestParams::new(TOOL)
        .with_arguments(serde_json::Map::new())
        .with_input_responses(responses)
        .with_request_state(state);
    match client.call_tool_once(params).await.unwrap() {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a result, got {other:?}"),
    }
}

#[tokio::test]
async fn mrtr_a_request_state_altered_replayed_or_another_callers_is_refused() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (status, workspace) = server
        .as_token(&alice)
        .post("/workspaces", &json!({"name": "alice's"}))
        .await;
    assert_eq!(status, 201, "{workspace}");
    let (_, session, agent) = server
        .as_token(&alice)
        .session_in(workspace["id"].as_str().unwrap(), None)
        .await;
    let pending = server.ask(&session, &agent, question("Whose state?")).await;
    let nobody = person(|_| decline());
    let as_alice = connect(&server.url("/mcp"), Some(&alice), true, nobody.clone()).await;
    let as_bob = connect(&server.url("/mcp"), Some(&bob), true, nobody).await;
    let (state, key) = first_round(&as_alice, json!({})).await;
    let choice = json!({"q1": "q1_opt1"});

    // One character changed in the middle of the seal.
    let mut altered = state.clone().into_bytes();
    let middle = altered.len() / 2;
    altered[middle] = if altered[middle] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let refused = retry(&as_alice, &altered, &key, choice.clone()).await;
    assert!(
        error_text(&refused).starts_with("requestState: not valid"),
        "{refused:?}"
    );
    // Bob holds Alice's state: it is bound to her.
    let refused = retry(&as_bob, &state, &key, choice.clone()).await;
    assert!(
        error_text(&refused).starts_with("requestState: not valid"),
        "{refused:?}"
    );
    assert_eq!(
        view(&server, &pending).await["active"],
        Value::Null,
        "alice's, unseen without a token"
    );
    let (_, seen) = server
        .as_token(&alice)
        .get(&format!("/clarification/{pending}"))
        .await;
    assert_eq!(seen["active"], true, "nothing was answered: {seen}");

    // Intact, by its owner: taken once.
    let taken = retry(&as_alice, &state, &key, choice.clone()).await;
    assert_eq!(results(&taken)[0]["outcome"], "answered");
    let replayed = retry(&as_alice, &state, &key, json!({"q1": "q1_opt2"})).await;
    assert!(
        error_text(&replayed).starts_with("requestState: already used"),
        "{replayed:?}"
    );
    let (_, seen) = server
        .as_token(&alice)
        .get(&format!("/clarification/{pending}"))
        .await;
    assert_eq!(
        seen["response"]["answers"][0]["selected_options"],
        json!(["q1_opt1"])
    );
}

#[tokio::test]
async fn a_client_without_forms_is_told_so_with_what_waits() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server
        .ask(&session, &agent, question("Asked where no form shows?"))
        .await;
    let client = connect_plain(&server, "/mcp", None).await;
    let result = client
        .call_tool(CallToolRequestParams::new(TOOL).with_arguments(serde_json::Map::new()))
        .await
        .unwrap();
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("cannot show forms"), "{text}");
    assert!(text.contains(&pending), "{text}");
    let done = results(&result);
    assert_eq!(
        (done[0]["outcome"].as_str(), done[0]["note"].as_str()),
        (Some("waiting"), Some("Asked where no form shows?"))
    );
    assert_eq!(view(&server, &pending).await["active"], true);
    server.stop().await;
}

/// A round's nonce is remembered for the round's hour although Slack's
/// replay window, in the same table, is ten minutes: each kind forgets
/// only its own (a Slack request used to sweep the MCP nonces too).
#[tokio::test]
async fn a_round_is_remembered_past_the_chat_apps_window() {
    use clarify_server::db::chat_messages::first_time;
    let server = TestServer::start().await;
    let db = server.db();
    let minute = 60_000_000;
    let now = clarify_server::clock::now_micros();
    assert!(
        first_time(db, "mcp-round:n1", now - 20 * minute, 0)
            .await
            .unwrap()
    );
    assert!(
        first_time(db, "slack:s1", now, now - 10 * minute)
            .await
            .unwrap()
    );
    assert!(
        !first_time(db, "mcp-round:n1", now, now - 60 * minute)
            .await
            .unwrap(),
        "replayable after a Slack request"
    );
    server.stop().await;
}

/// More waiting than one call shows is said, in either era, so the person
/// knows to call again.
#[tokio::test]
async fn more_waiting_than_one_call_shows_is_said() {
    let server = TestServer::start().await;
    for i in 0..11 {
        let (_, session, agent) = server.session(None).await;
        server
            .ask(&session, &agent, question(&format!("One of many {i}?")))
            .await;
    }
    for modern in [false, true] {
        let client = connect(&server.url("/mcp"), None, modern, person(|_| decline())).await;
        let result = call(&client, json!({})).await;
        assert_eq!(results(&result).len(), 10);
        assert_eq!(
            result.structured_content.as_ref().unwrap()["more_waiting"],
            true,
            "modern: {modern}"
        );
    }
    server.stop().await;
}
