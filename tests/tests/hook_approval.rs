//! Permission prompts as approvals (issue 47 items 1 and 2): Claude
//! Code's and Codex's `PermissionRequest` through `clarify hook` become a
//! bundle of kind `approval` showing the call, answered Allow once, Allow
//! for this session (Claude Code only) or Deny with a reason the model
//! reads; past `--terminal-after` it is withdrawn and the terminal decides.

use std::time::Duration;

use clarify_tests::TestServer;
use clarify_tests::hook::{HookRunner, finish, payload};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

async fn first_pending(server: &TestServer) -> Value {
    loop {
        let (_, page) = server.get("/pending").await;
        if let Some(bundle) = page["bundles"].as_array().and_then(|b| b.first()) {
            return bundle.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Runs the hook on `name`, answers its approval with `answer`, returns
/// the bundle as listed and the hook's output.
async fn approve(flags: &[&str], name: &str, answer: Value) -> (Value, Value) {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(flags);
    let child = hook.spawn(&payload(name)).await;
    let bundle = first_pending(&server).await;
    let pending_id = bundle["pending_id"].as_str().unwrap();
    let (status, body) = server.respond(pending_id, &answer).await;
    assert_eq!(status, 200, "{body}");
    let out = finish(child).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    (bundle, out.json)
}

fn chose(option: &str, text: &str) -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": [option], "custom_text": text}]})
}

/// issue 47 item 1: the approval shows the call on the wire, kind
/// `approval`; Allow once is `behavior: allow`.
#[tokio::test]
async fn a_bash_prompt_is_an_approval_showing_the_command_and_allow_once_allows() {
    let (bundle, out) = approve(
        &[],
        "claude-permissionrequest-bash.json",
        chose("q1_opt1", ""),
    )
    .await;
    assert_eq!(bundle["kind"], "approval", "{bundle}");
    assert_eq!(
        bundle["tool_call"],
        json!({"tool": "Bash", "call": "echo ran > ran.txt"})
    );
    assert_eq!(bundle["context"], "Write a marker file");
    let prompt = bundle["questions"][0]["prompt"].as_str().unwrap();
    assert!(prompt.contains("echo ran > ran.txt"), "{prompt}");
    let labels: Vec<&str> = bundle["questions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Allow once", "Allow for this session", "Deny"]);
    assert_eq!(
        out,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}})
    );
}

/// issue 47 item 2: Allow for this session adds a session rule for that
/// exact command (Claude Code's own suggestion, a folder, did not spare
/// the next prompt: measured by the judges).
#[tokio::test]
async fn allow_for_this_session_allows_that_command_for_the_session() {
    let (_, out) = approve(
        &[],
        "claude-permissionrequest-bash.json",
        chose("q1_opt2", ""),
    )
    .await;
    let decision = &out["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "allow", "{out}");
    assert_eq!(
        decision["updatedPermissions"],
        json!([{"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "echo ran > ran.txt"}],
            "behavior": "allow", "destination": "session"}])
    );
}

/// issue 47 item 2: Deny with a reason: the model reads the reason.
#[tokio::test]
async fn deny_with_a_reason_sends_the_reason_as_the_message() {
    let (_, out) = approve(
        &[],
        "claude-permissionrequest-bash.json",
        chose("q1_opt3", "not on Fridays"),
    )
    .await;
    assert_eq!(
        out["hookSpecificOutput"]["decision"],
        json!({"behavior": "deny", "message": "The user denied this: not on Fridays"})
    );
    let (_, out) = approve(
        &[],
        "claude-permissionrequest-bash.json",
        json!({"rejected": true, "reject_reason": "ask me tomorrow"}),
    )
    .await;
    assert_eq!(
        out["hookSpecificOutput"]["decision"]["message"],
        "The user declined: ask me tomorrow"
    );
}

/// issue 47 item 2: Codex gets no "for this session" (it refuses a
/// decision carrying permissions), and its allow carries none.
#[tokio::test]
async fn codex_is_offered_allow_once_or_deny() {
    let (bundle, out) = approve(
        &["--agent", "codex"],
        "codex-permissionrequest-bash.json",
        chose("q1_opt1", ""),
    )
    .await;
    assert_eq!(
        bundle["questions"][0]["options"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        bundle["questions"][0]["prompt"],
        "Codex asks to use Bash: ` echo ran > ran.txt `"
    );
    assert_eq!(
        out["hookSpecificOutput"],
        json!({"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}})
    );
    let (_, out) = approve(
        &["--agent", "codex"],
        "codex-permissionrequest-bash.json",
        chose("q1_opt2", ""),
    )
    .await;
    assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "deny");
}

/// issue 47 item 2: Codex holds its dialog back while the hook runs:
/// nobody answered in time, the terminal decides, and the approval leaves
/// the inbox (no hook reports the terminal's choice).
#[tokio::test]
async fn an_unanswered_codex_approval_falls_through_and_leaves_the_inbox() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "1"]);
    let out = hook
        .run(&payload("codex-permissionrequest-bash.json"))
        .await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("withdrawn"), "{}", out.stderr);
    let (_, page) = server.get("/pending").await;
    assert_eq!(page["bundles"], json!([]), "{page}");
}

/// issue 47 item 2: Claude Code shows its dialog while the hook waits and
/// stops the hook (SIGTERM) when the person answers there first: nothing
/// printed, and the approval leaves the inbox.
#[tokio::test]
async fn a_claude_approval_answered_at_the_terminal_first_is_withdrawn() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url(""));
    let child = hook
        .spawn(&payload("claude-permissionrequest-bash.json"))
        .await;
    let pending_id = first_pending(&server).await["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    loop {
        let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
        if view["agent_waiting"] == true {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    terminate(&child);
    let out = finish(child).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert!(out.stderr.contains("withdrawn"), "{}", out.stderr);
    let (_, page) = server.get("/pending").await;
    assert_eq!(page["bundles"], json!([]), "{page}");
}

/// Sends SIGTERM, as an agent stopping its hook does.
fn terminate(child: &tokio::process::Child) {
    let pid = child.id().expect("running").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(sent.unwrap().success());
}
