//! The audit export (issue 49 item 5): `GET /api/v1/audit` and `clarify
//! audit` under --auth: who asked and who answered each question, how and
//! when, every losing attempt; only what the caller may see (A1-A3), all
//! of it for an admin; agents read none; bad parameters name themselves.

use clarify_tests::TestServer;
use serde_json::{Value, json};

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "Yes"}, {"label": "No"}]}])
}

fn pick(option: &str) -> Value {
    json!({"answers": [{"question_id": "q1", "selected_options": [option]}]})
}

/// A workspace of `token`'s user with one question in it: (pending id, agent token).
async fn asked_in_own_workspace(
    server: &TestServer,
    token: &str,
    prompt: &str,
) -> (String, String) {
    let user = server.as_token(token);
    let (_, workspace) = user.post("/workspaces", &json!({"name": prompt})).await;
    let (_, session, agent) = user
        .session_in(workspace["id"].as_str().unwrap(), None)
        .await;
    (server.ask(&session, &agent, question(prompt)).await, agent)
}

/// GETs the export as `token`: status, the `X-Next-Cursor`, the body.
async fn export(server: &TestServer, token: &str, query: &str) -> (u16, String, String) {
    let response = server
        .client()
        .get(server.url(&format!("/api/v1/audit{query}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let next = response
        .headers()
        .get("x-next-cursor")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, next, response.text().await.unwrap())
}

fn lines(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Issue 49 item 5: each user's export holds their own workspace's
/// questions only, with the winner (who, channel, when, what) and the
/// losing attempt; an admin's holds both; an agent's token is refused; a
/// page of one walks all by its cursor; CSV parses with a header row.
#[tokio::test]
async fn the_audit_export_says_who_asked_and_answered_and_shows_only_what_the_caller_may_see() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let (hers, agent) = asked_in_own_workspace(&server, &alice, "Ship it?").await;
    let (his, _) = asked_in_own_workspace(&server, &bob, "Rename it?").await;
    assert_eq!(
        server
            .as_token(&alice)
            .respond(&hers, &pick("q1_opt1"))
            .await
            .0,
        200
    );
    let (_, lost) = server
        .as_token(&alice)
        .respond(&hers, &pick("q1_opt2"))
        .await;
    assert_eq!(lost["claimed"], false, "{lost}");

    let (status, next, body) = export(&server, &alice, "").await;
    assert_eq!((status, next.as_str()), (200, ""), "{body}");
    let rows = lines(&body);
    assert_eq!(rows.len(), 1, "alice sees her workspace only: {body}");
    let row = &rows[0];
    assert_eq!(row["pending_id"], hers.as_str());
    assert_eq!(row["status"], "answered");
    assert_eq!(row["questions"][0]["prompt"], "Ship it?");
    assert_eq!(row["questions"][0]["answer"], "Yes");
    assert_eq!(row["answered_by"]["user"], "alice");
    assert_eq!(row["answered_by"]["channel"], "rest");
    assert!(row["answered_at"].as_str().unwrap().ends_with('Z'), "{row}");
    let outcomes: Vec<&str> = row["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["won", "lost"], "{row}");
    assert_eq!(lines(&export(&server, &bob, "").await.2).len(), 1);

    // An admin sees both workspaces; a page of one walks them in order.
    let admin = server.token("auditor").await;
    let said = std::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args([
            "token",
            "create",
            "--user",
            "auditor",
            "--admin",
            "--database-url",
            server.database().url(),
        ])
        .output()
        .unwrap();
    assert!(
        said.status.success(),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    let (_, next, body) = export(&server, &admin, "?limit=1").await;
    assert_eq!(lines(&body)[0]["pending_id"], hers.as_str());
    assert!(!next.is_empty());
    let (_, last, body) = export(&server, &admin, &format!("?limit=1&cursor={next}")).await;
    assert_eq!(lines(&body)[0]["pending_id"], his.as_str());
    assert_eq!(last, "", "two bundles, two pages");

    // CSV: a header row and one row a bundle, read by an independent parser.
    let (status, _, body) = export(&server, &admin, "?format=csv").await;
    assert_eq!(status, 200);
    let mut csv = csv::Reader::from_reader(body.as_bytes());
    assert_eq!(&csv.headers().unwrap()[0], "pending_id");
    let records: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 2);
    assert_eq!(&records[0][8], "Yes");
    assert!(
        records[0][13].contains("lost alice via rest"),
        "{:?}",
        records[0]
    );

    // A span with nothing in it; bad parameters, each named; an agent.
    let (_, _, body) = export(&server, &admin, "?until=2000-01-01T00:00:00Z").await;
    assert!(body.is_empty(), "{body}");
    for (query, field) in [
        ("?since=yesterday", "since"),
        ("?until=1", "until"),
        ("?format=xml", "format"),
        ("?limit=0", "limit"),
        ("?cursor=nope", "cursor"),
    ] {
        let (status, _, body) = export(&server, &admin, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains(field), "{query}: {body}");
    }
    assert_eq!(export(&server, &agent, "").await.0, 403);
}

/// Issue 49 item 5: `clarify audit` writes every page (two here), CSV's
/// header once.
#[tokio::test]
async fn clarify_audit_writes_every_page() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    for n in 0..3 {
        asked_in_own_workspace(&server, &alice, &format!("Question {n}?")).await;
    }
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_clarify-under-test"))
        .args([
            "audit",
            "--server",
            &server.url(""),
            "--format",
            "csv",
            "--page-size",
            "2",
        ])
        .env("CLARIFY_TOKEN", &alice)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(csv.records().count(), 3, "{text}");
}
