//! `clarify pending` and `clarify answer` end to end: the binary lists and
//! answers a real server's bundles, and the answer is recorded as the `cli`
//! channel (issue 18, provenance).

use std::process::Stdio;

use clarify_tests::TestServer;
use serde_json::{Value, json};
use tokio::process::Command;

async fn clarify(server: &TestServer, args: &[&str]) -> (i32, Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args(args)
        .args(["--server", &server.url("")])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_slice(&output.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn questions() -> Value {
    json!([
        {"prompt": "Which checks?", "multi_select": true,
         "options": [{"label": "lint"}, {"label": "test"}]},
        {"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}
    ])
}

#[tokio::test]
async fn pending_lists_and_answer_answers_as_the_cli_channel() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, questions()).await;

    let (code, page, stderr) = clarify(&server, &["pending"]).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(page["bundles"][0]["pending_id"], pending.as_str(), "{page}");

    let (code, body, stderr) = clarify(
        &server,
        &[
            "answer",
            &pending,
            "-o",
            "q1_opt1",
            "-o",
            "q1_opt2",
            "-t",
            "q2=after lunch",
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(body["claimed"], true, "{body}");
    assert_eq!(
        body["response"]["answers"],
        json!([
            {"question_id": "q1", "selected_options": ["q1_opt1", "q1_opt2"], "custom_text": ""},
            {"question_id": "q2", "selected_options": [], "custom_text": "after lunch"}
        ])
    );
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(
        view["answered_by"],
        json!({"user": "anonymous", "channel": "cli", "client": ""})
    );

    // Too late: exit 2, and the winner's answer is what is printed.
    let (code, body, _) = clarify(&server, &["answer", &pending, "--reject"]).await;
    assert_eq!(code, 2);
    assert_eq!(body["claimed"], false, "{body}");
    assert_eq!(body["response"]["rejected"], false, "the winner's: {body}");
    server.stop().await;
}

#[tokio::test]
async fn bad_flags_and_server_errors_exit_1_with_a_message() {
    let server = TestServer::start().await;
    let (code, _, stderr) = clarify(&server, &["answer", "nope"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("--option"), "{stderr}");
    let (code, _, stderr) = clarify(&server, &["answer", "nope", "-o", "banana"]).await;
    assert_eq!(code, 1);
    assert!(stderr.contains("banana"), "{stderr}");
    let (code, _, stderr) = clarify(&server, &["answer", "no-such-bundle", "-o", "q1_opt1"]).await;
    assert_eq!(code, 1);
    assert!(!stderr.is_empty(), "the server's error is shown");
    server.stop().await;
}
