//! The terminal stays in the race (issue 47 item 2): past
//! `--terminal-after` the hook falls through (no output) and Claude Code
//! shows its own dialog; what the person chose there comes back in the
//! `PostToolUse` report and settles the bundle through the one claim with
//! channel `terminal`, which only the asking agent's session may use. The
//! session's end takes its open questions out of the inbox.

use clarify_tests::TestServer;
use clarify_tests::hook::{HookRunner, finish, fixture, next, payload};
use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");
const DATABASE: &str = "Which database should the service use?";

async fn pending(server: &TestServer) -> Vec<Value> {
    let (_, page) = server.get("/pending").await;
    page["bundles"].as_array().cloned().unwrap_or_default()
}

/// issue 47 item 2: nobody answers in time, the terminal dialog takes
/// over while the question stays open; Claude Code's permission prompt
/// for it races the dialog and is stopped when the person answers there
/// first; the person's choice settles it, answered by channel `terminal`,
/// "at the terminal".
#[tokio::test]
async fn a_fall_through_then_the_terminals_answer_settles_it_as_terminal() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "1"]);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    let out = hook.run(&asked).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    assert!(out.stderr.contains("stays open"), "{}", out.stderr);
    let open = pending(&server).await;
    assert_eq!(open.len(), 1, "the question stays open elsewhere");
    let pending_id = open[0]["pending_id"].as_str().unwrap().to_owned();

    let prompt = next("claude-permissionrequest-askuserquestion.json", &asked);
    let racing = hook.spawn(&prompt).await;
    waited_on(&server, &pending_id).await;
    terminate(&racing);
    let out = finish(racing).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert_eq!(pending(&server).await.len(), 1, "still open for the report");

    let report = next("claude-posttooluse-askuserquestion.json", &asked);
    let out = hook.run(&report).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert!(pending(&server).await.is_empty());
    let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["status"], "answered", "{view}");
    assert_eq!(view["answered_by"]["channel"], "terminal", "{view}");
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
}

/// issue 47 item 2: the dialog is shown at once (`--terminal-after 0`)
/// and the answer from Clarify still wins, through the permission
/// prompt's hook racing it: the same bundle, answered as the tool's input.
#[tokio::test]
async fn with_the_dialog_shown_at_once_an_answer_from_clarify_still_wins() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "0"]);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    assert_eq!(hook.run(&asked).await.stdout, "");
    let racing = hook
        .spawn(&next(
            "claude-permissionrequest-askuserquestion.json",
            &asked,
        ))
        .await;
    let open = pending(&server).await;
    assert_eq!(open.len(), 1, "one question, asked once");
    let pending_id = open[0]["pending_id"].as_str().unwrap();
    let body = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(pending_id, &body).await.0, 200);
    let out = finish(racing).await;
    let specific = &out.json["hookSpecificOutput"];
    assert_eq!(
        specific["hookEventName"], "PermissionRequest",
        "{}",
        out.stderr
    );
    assert_eq!(specific["decision"]["behavior"], "allow");
    assert_eq!(
        specific["decision"]["updatedInput"]["answers"],
        json!({DATABASE: "PostgreSQL"})
    );
    assert_eq!(
        specific["decision"]["updatedInput"]["questions"],
        asked["tool_input"]["questions"]
    );
}

/// Once the hook's process waits on `pending_id` (the agent's wait).
async fn waited_on(server: &TestServer, pending_id: &str) {
    loop {
        let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
        if view["agent_waiting"] == true {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// Sends SIGTERM, as Claude Code stopping its hook does.
fn terminate(child: &tokio::process::Child) {
    let pid = child.id().expect("running").to_string();
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(sent.unwrap().success());
}

/// issue 47 item 2: the terminal's multi-select and free text settle as
/// the labels' options and the text.
#[tokio::test]
async fn the_terminals_multi_select_and_free_text_are_read_back_as_options_and_text() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "0"]);
    let recorded = fixture("claude-posttooluse-askuserquestion-multi-freetext-terminal.json");
    let mut asked = payload("claude-pretooluse-askuserquestion.json");
    asked["tool_input"] = json!({"questions": recorded["tool_input"]["questions"]});
    asked["tool_use_id"] = recorded["tool_use_id"].clone();
    assert_eq!(hook.run(&asked).await.stdout, "");
    let pending_id = pending(&server).await[0]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut report = recorded;
    report["session_id"] = asked["session_id"].clone();
    let out = hook.run(&report).await;
    assert_eq!(out.stdout, "", "{}", out.stderr);
    let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["answered_by"]["channel"], "terminal", "{view}");
    let answers = &view["response"]["answers"];
    assert_eq!(
        answers[0]["selected_options"],
        json!(["q1_opt1", "q1_opt3"])
    );
    assert_eq!(answers[1]["selected_options"], json!([]));
    assert_eq!(answers[1]["custom_text"], "my own \"db\"");
}

/// issue 47 item 2: Claude Code reports an answer the hook gave too; that
/// report settles nothing twice (one winner, no terminal attempt).
#[tokio::test]
async fn the_report_of_the_hooks_own_answer_changes_nothing() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "60"]);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    let child = hook.spawn(&asked).await;
    let pending_id = loop {
        if let Some(b) = pending(&server).await.first() {
            break b["pending_id"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    let body = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&pending_id, &body).await.0, 200);
    assert_eq!(
        finish(child).await.json["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
    let report = next(
        "claude-posttooluse-askuserquestion-answered-by-hook.json",
        &asked,
    );
    let out = hook.run(&report).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["answered_by"]["channel"], "rest", "{view}");
    let (_, attempts) = server
        .get(&format!("/clarification/{pending_id}/attempts"))
        .await;
    assert_eq!(
        attempts["attempts"].as_array().map(Vec::len),
        Some(1),
        "{attempts}"
    );
}

/// issue 47 item 2: channel `terminal` is the asking agent's word only:
/// a person's REST call or another agent's session claiming it is 403.
#[tokio::test]
async fn only_the_asking_agents_session_may_answer_as_the_terminal() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let (_, other_session, other_agent) = server.session(None).await;
    assert_ne!(session, other_session);
    let pending_id = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Go?", "options": [{"label": "a"}, {"label": "b"}]}]),
        )
        .await;
    let body = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    let path = format!(
        "{}/clarification/{pending_id}/respond",
        server.url("/api/v1")
    );
    let claim = |token: Option<String>| {
        let mut request = server
            .client()
            .post(&path)
            .header("x-clarify-client", "terminal")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(claim(None).await.unwrap().status(), 403);
    assert_eq!(claim(Some(other_agent)).await.unwrap().status(), 403);
    let won = claim(Some(agent)).await.unwrap();
    assert_eq!(won.status(), 200);
    let (_, view) = server.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["answered_by"]["channel"], "terminal", "{view}");
}

/// issue 47 item 2: the agent's session ends, its open questions leave
/// the inbox, and the next conversation starts a new session.
#[tokio::test]
async fn the_session_end_takes_its_questions_out_of_the_inbox() {
    let server = TestServer::start().await;
    let hook = HookRunner::new(BINARY, &server.url("")).with_flags(&["--terminal-after", "0"]);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    assert_eq!(hook.run(&asked).await.stdout, "");
    let session = pending(&server).await[0]["session_id"].clone();
    let out = hook.run(&next("claude-sessionend.json", &asked)).await;
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert!(pending(&server).await.is_empty());
    let (_, view) = server
        .get(&format!("/sessions/{}", session.as_str().unwrap()))
        .await;
    assert_eq!(view["state"], "COMPLETED", "{view}");
    assert_eq!(hook.run(&asked).await.stdout, "");
    assert_ne!(pending(&server).await[0]["session_id"], session);
}

/// issue 47 item 2, under `--auth`: the hook asks with the person's token
/// (CLARIFY_TOKEN) on a session of their own, the person answers in
/// Clarify or at the terminal, and the terminal's answer is recorded as
/// theirs; the session's end is theirs to make too.
#[tokio::test]
async fn under_auth_the_terminals_answer_is_the_persons() {
    let server = TestServer::start_with_auth().await;
    let token = server.token("alice").await;
    let hook = HookRunner::new(BINARY, &server.url(""))
        .with_token(&token)
        .with_flags(&["--terminal-after", "0"]);
    let asked = payload("claude-pretooluse-askuserquestion.json");
    let out = hook.run(&asked).await;
    assert_eq!(out.stdout, "", "{}", out.stderr);
    let alice = server.as_token(&token);
    let (_, page) = alice.get("/pending").await;
    let pending_id = page["bundles"][0]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, bob_page) = server
        .as_token(&server.token("bob").await)
        .get("/pending")
        .await;
    assert_eq!(
        bob_page["bundles"],
        json!([]),
        "another person never sees it"
    );

    let out = hook
        .run(&next("claude-posttooluse-askuserquestion.json", &asked))
        .await;
    assert_eq!(out.stdout, "", "{}", out.stderr);
    let (_, view) = alice.get(&format!("/clarification/{pending_id}")).await;
    assert_eq!(view["answered_by"]["channel"], "terminal", "{view}");
    assert_eq!(view["answered_by"]["user"], "alice", "{view}");

    let mut again = next("claude-pretooluse-askuserquestion.json", &asked);
    again["tool_use_id"] = json!("toolu_again");
    assert_eq!(hook.run(&again).await.stdout, "");
    let out = hook.run(&next("claude-sessionend.json", &asked)).await;
    assert_eq!(out.stdout, "", "{}", out.stderr);
    let (_, page) = alice.get("/pending").await;
    assert_eq!(page["bundles"], json!([]), "{page}");
}
