//! `clarify hook` for Claude Code's `AskUserQuestion` (issue 47 item 2):
//! the real binary fed real recorded payloads (`tests/fixtures/hooks/`)
//! against a real server. The question reaches Clarify as asked, the
//! person's answer comes back as `updatedInput.answers` (labels, several
//! joined with ", ", free text as written), a decline and an expiry as a
//! denial the model reads, and whatever goes wrong falls back to the
//! agent's own dialog: no output, exit 0, the reason on stderr.

use std::time::Duration;

use clarify_tests::TestServer;
use clarify_tests::hook::{HookRunner, finish, fixture, next, payload};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

/// The bundle waiting on `server` whose first prompt is `prompt`, once the
/// hook's process has asked it.
async fn waiting(server: &TestServer, prompt: &str) -> Value {
    loop {
        let (_, page) = server.get("/pending").await;
        let found = page["bundles"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["questions"][0]["prompt"] == prompt);
        if let Some(bundle) = found {
            return bundle.clone();
        }
        // Another process asks: look again shortly (the test's own time
        // limit ends a wait that never ends).
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn pending_count(server: &TestServer) -> usize {
    let (_, page) = server.get("/pending").await;
    page["bundles"].as_array().map_or(0, Vec::len)
}

const DATABASE: &str = "Which database should the service use?";

/// `PreToolUse` holding Claude Code's dialog back a minute: answered
/// from Clarify meanwhile, the dialog never shows.
const HOLD: &[&str] = &["--terminal-after", "60"];

/// issue 47 item 2: AskUserQuestion answered in Clarify becomes the
/// tool's `answers`, the questions echoed unchanged.
#[tokio::test]
async fn an_answer_in_clarify_becomes_the_tools_answers() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(HOLD);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    let child = hook.spawn(&asked).await;
    let bundle = waiting(&server, DATABASE).await;
    assert_eq!(bundle["kind"], "question");
    let question = &bundle["questions"][0];
    assert_eq!(question["title"], "Database");
    assert_eq!(question["options"][1]["label"], "SQLite");
    assert_eq!(question["options"][1]["description"], "One file");
    let pending = bundle["pending_id"].as_str().unwrap();
    let (status, _) = server
        .respond(
            pending,
            &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
        )
        .await;
    assert_eq!(status, 200);
    let out = finish(child).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let specific = &out.json["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse");
    assert_eq!(specific["permissionDecision"], "allow");
    assert_eq!(
        specific["updatedInput"]["answers"],
        json!({DATABASE: "SQLite"})
    );
    assert_eq!(
        specific["updatedInput"]["questions"],
        asked["tool_input"]["questions"]
    );
}

/// issue 47 item 2: several labels of a multi-select joined with ", " as
/// the terminal dialog joins them; free text as written; a question text
/// with quotes and a newline is the key, exactly.
#[tokio::test]
async fn multi_select_free_text_and_quoted_questions_come_back_as_the_dialog_gives_them() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(HOLD);
    let mut asked = payload("claude-pretooluse-askuserquestion.json");
    let recorded = fixture("claude-posttooluse-askuserquestion-multi-freetext-terminal.json");
    asked["tool_input"] = json!({"questions": recorded["tool_input"]["questions"]});
    let languages = "Which \"languages\" should\nwe support?";
    let child = hook.spawn(&asked).await;
    let bundle = waiting(&server, languages).await;
    assert_eq!(bundle["questions"][0]["multi_select"], true);
    let pending = bundle["pending_id"].as_str().unwrap();
    let answers = json!({"answers": [
        {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt3"]},
        {"question_id": "q2", "custom_text": "my own \"db\"\nfor now"},
    ]});
    assert_eq!(server.respond(pending, &answers).await.0, 200);
    let out = finish(child).await;
    assert_eq!(
        out.json["hookSpecificOutput"]["updatedInput"]["answers"],
        json!({languages: "Rust, Zig", DATABASE: "my own \"db\"\nfor now"}),
        "{}",
        out.stderr
    );
}

/// issue 47 item 2: a decline is a denial whose reason the model reads.
#[tokio::test]
async fn a_decline_is_a_denial_carrying_the_reason() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(HOLD);
    let child = hook
        .spawn(&payload("claude-pretooluse-askuserquestion.json"))
        .await;
    let bundle = waiting(&server, DATABASE).await;
    let pending = bundle["pending_id"].as_str().unwrap();
    let (status, _) = server
        .respond(
            pending,
            &json!({"rejected": true, "reject_reason": "not now"}),
        )
        .await;
    assert_eq!(status, 200);
    let out = finish(child).await;
    let specific = &out.json["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{}", out.stdout);
    assert_eq!(
        specific["permissionDecisionReason"],
        "The user declined: not now"
    );
}

/// issue 47 item 2: an expiry without defaults says "no answer in time",
/// never an invented choice.
#[tokio::test]
async fn an_expiry_is_no_answer_in_time_never_a_choice() {
    let server = TestServer::start_with(clarify_server::Config {
        question_ttl: Some(Duration::from_secs(1)),
        ..clarify_server::Config::default()
    })
    .await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(HOLD);
    let out = hook
        .run(&payload("claude-pretooluse-askuserquestion.json"))
        .await;
    let specific = &out.json["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{}", out.stderr);
    assert!(
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .starts_with("No answer in time"),
        "{}",
        out.stdout
    );
    assert!(specific.get("updatedInput").is_none());
}

/// issue 47 item 3: a server that is not there, a refused token or an
/// input that is not a hook's: no output (the agent shows its own
/// dialog), exit 0, the reason on stderr.
#[tokio::test]
async fn never_stall_never_guess_failures_fall_back_to_the_agents_dialog() {
    let server = TestServer::start_with_auth().await;
    let gone = HookRunner::new(BINARY, "http://127.0.0.1:9");
    let out = gone
        .run(&payload("claude-pretooluse-askuserquestion.json"))
        .await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("not reachable"), "{}", out.stderr);

    let refused = HookRunner::new(BINARY, &server.url("")).with_token("clk_pat_wrong");
    let out = refused
        .run(&payload("claude-pretooluse-askuserquestion.json"))
        .await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(
        out.stderr.contains("refused CLARIFY_TOKEN"),
        "{}",
        out.stderr
    );

    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(HOLD);
    for text in ["", "not json", "{\"session_id\": \"s\"}", "[1,2]"] {
        let out = hook.run_text(text).await;
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{text}");
        assert!(
            out.stderr.contains("clarify hook:"),
            "{text}: {}",
            out.stderr
        );
    }
    let mut empty = payload("claude-pretooluse-askuserquestion.json");
    empty["tool_input"] = json!({"questions": []});
    let out = hook.run(&empty).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert_eq!(pending_count(&server).await, 0);
}

/// issue 47 item 2: one Clarify session per agent conversation, found
/// again by the next call; another conversation is another session.
#[tokio::test]
async fn each_conversation_is_one_clarify_session() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "0"]);
    let first = payload("claude-pretooluse-askuserquestion.json");
    assert_eq!(hook.run(&first).await.stdout, "");
    let mut again = next("claude-pretooluse-askuserquestion.json", &first);
    again["tool_input"]["questions"][0]["question"] = json!("And which port?");
    again["tool_use_id"] = json!("toolu_next");
    assert_eq!(hook.run(&again).await.stdout, "");
    let other = payload("claude-pretooluse-askuserquestion.json");
    assert_eq!(hook.run(&other).await.stdout, "");
    let (_, page) = server.get("/pending").await;
    let sessions: Vec<&str> = page["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 3, "{page}");
    assert_eq!(sessions[0], sessions[1]);
    assert_ne!(sessions[0], sessions[2]);
    let (_, task) = server
        .get(&format!(
            "/tasks/{}",
            page["bundles"][0]["task_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(task["title"], "shop", "{task}");
}
