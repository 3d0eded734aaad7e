//! `clarify backup` and `clarify restore` (issue 49 item 4), the binary
//! against a real SQLite file: a copy taken while answers are being
//! written holds every answer acknowledged before it began, and restores
//! into a server that serves them; a restore never replaces a file a
//! server has open, nor takes a damaged copy or one newer than itself.

use std::time::Instant;

use clarify_tests::process::{ServerProcess, database_url, fresh_dir, post_json};
use serde_json::{Value, json};
use tokio::process::Command;

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

/// Runs `clarify ARGS`: whether it succeeded, and what it said.
async fn clarify(args: &[&str]) -> (bool, String) {
    let out = Command::new(BINARY).args(args).output().await.unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// `count` one-question bundles asked on a new session of the server at `url`.
async fn ask(http: &reqwest::Client, url: &str, count: usize) -> Vec<String> {
    let task = post_json(http, url, "/tasks", None, &json!({"title": "backed up"})).await;
    let path = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    let session = post_json(http, url, &path, None, &json!({})).await;
    let (id, agent) = (
        session["id"].as_str().unwrap(),
        session["agent_token"].as_str().unwrap(),
    );
    let mut ids = Vec::new();
    for n in 0..count {
        let question = json!({"session_id": id, "questions": [{"prompt": format!("Which way, {n}?"),
            "options": [{"label": "Left"}, {"label": "Right"}]}]});
        let asked = post_json(http, url, "/clarification/request", Some(agent), &question).await;
        ids.push(
            asked["pending_id"]
                .as_str()
                .unwrap_or_else(|| panic!("{asked}"))
                .to_owned(),
        );
    }
    ids
}

/// The view of `id` on the server at `url`.
async fn view(http: &reqwest::Client, url: &str, id: &str) -> Value {
    http.get(format!("{url}/api/v1/clarification/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Issue 49 item 4: a backup taken while answers are being written keeps
/// every answer acknowledged before it began; restored into a fresh place,
/// a server serves them as answered, with what was answered, and every
/// other bundle whole (waiting, or answered whole).
#[tokio::test]
async fn a_backup_under_writes_keeps_every_answer_acknowledged_before_it_began() {
    let http = reqwest::Client::new();
    let served = fresh_dir();
    let source = database_url(&served);
    let server = ServerProcess::start_in(BINARY, "", served);
    let ids = ask(&http, &server.url, 300).await;
    let (acknowledged_tx, mut acknowledged) = tokio::sync::mpsc::unbounded_channel();
    let writer = {
        let (http, url, ids) = (http.clone(), server.url.clone(), ids.clone());
        tokio::spawn(async move {
            for (n, id) in ids.iter().enumerate() {
                let option = if n % 2 == 0 { "q1_opt1" } else { "q1_opt2" };
                let body =
                    json!({"answers": [{"question_id": "q1", "selected_options": [option]}]});
                let reply = post_json(
                    &http,
                    &url,
                    &format!("/clarification/{id}/respond"),
                    None,
                    &body,
                )
                .await;
                assert_eq!(reply["claimed"], true, "{reply}");
                let _ = acknowledged_tx.send((id.clone(), option, Instant::now()));
            }
        })
    };
    // Some answers are in; the copy starts while the rest are being written.
    let mut before = Vec::new();
    while before.len() < 60 {
        before.push(acknowledged.recv().await.unwrap());
    }
    let copy_dir = fresh_dir();
    let copy = copy_dir.join("copy.db");
    let started = Instant::now();
    let (ok, said) = clarify(&["backup", copy.to_str().unwrap(), "--database-url", &source]).await;
    assert!(ok, "{said}");
    assert!(said.contains("backed up to"), "{said}");
    writer.await.unwrap();
    while let Ok(answer) = acknowledged.try_recv() {
        if answer.2 < started {
            before.push(answer);
        }
    }
    server.stop();

    let restored_dir = fresh_dir();
    let target = database_url(&restored_dir);
    let (ok, said) = clarify(&["restore", copy.to_str().unwrap(), "--database-url", &target]).await;
    assert!(ok, "{said}");
    let restored = ServerProcess::start_in(BINARY, "", restored_dir);
    for (id, option, _) in &before {
        let view = view(&http, &restored.url, id).await;
        assert_eq!(
            view["status"], "answered",
            "{id} was acknowledged before the backup: {view}"
        );
        assert_eq!(
            view["response"]["answers"][0]["selected_options"][0], *option,
            "{view}"
        );
    }
    for id in &ids {
        let view = view(&http, &restored.url, id).await;
        let status = view["status"].as_str().unwrap_or_default();
        assert!(status == "pending" || status == "answered", "{view}");
        if status == "answered" {
            assert!(
                view["response"]["answers"][0]["selected_options"][0].is_string(),
                "{view}"
            );
        }
    }
    restored.stop();
    let _ = std::fs::remove_dir_all(copy_dir);
}

/// Issue 49 item 4: a restore is refused while a server has the file open,
/// for a file that is no Clarify database, and for a copy newer than this
/// clarify; each time the database is left as it was. A copy is never
/// written over an existing file; PostgreSQL is sent to its own tools.
#[tokio::test]
async fn a_restore_is_refused_under_a_running_server_and_for_a_bad_or_newer_copy() {
    let http = reqwest::Client::new();
    let served = fresh_dir();
    let url = database_url(&served);
    let server = ServerProcess::start_in(BINARY, "", served.clone());
    let ids = ask(&http, &server.url, 1).await;
    let elsewhere = fresh_dir();
    let copy = elsewhere.join("copy.db");
    let (ok, said) = clarify(&["backup", copy.to_str().unwrap(), "--database-url", &url]).await;
    assert!(ok, "{said}");
    let (ok, said) = clarify(&["backup", copy.to_str().unwrap(), "--database-url", &url]).await;
    assert!(!ok && said.contains("exists"), "{said}");

    let (ok, said) = clarify(&["restore", copy.to_str().unwrap(), "--database-url", &url]).await;
    assert!(!ok && said.contains("stop it first"), "{said}");
    assert_eq!(view(&http, &server.url, &ids[0]).await["status"], "pending");
    server.stop();

    let target = database_url(&elsewhere);
    let not_ours = elsewhere.join("notes.txt");
    std::fs::write(&not_ours, "not a database").unwrap();
    let (ok, said) = clarify(&[
        "restore",
        not_ours.to_str().unwrap(),
        "--database-url",
        &target,
    ])
    .await;
    assert!(!ok && said.contains("not a SQLite database"), "{said}");

    let newer = elsewhere.join("newer.db");
    std::fs::copy(&copy, &newer).unwrap();
    let newer_url = format!("sqlite://{}", newer.display());
    let (ok, said) = clarify(&[
        "token",
        "create",
        "--user",
        "x",
        "--database-url",
        &newer_url,
    ])
    .await;
    assert!(ok, "{said}");
    sqlx::any::install_default_drivers();
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&newer_url)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
                 VALUES (9999, 'from the future', TRUE, X'00', 0)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    drop(conn);
    let (ok, said) = clarify(&[
        "restore",
        newer.to_str().unwrap(),
        "--database-url",
        &target,
    ])
    .await;
    assert!(!ok && said.contains("schema version 9999"), "{said}");
    assert!(
        !elsewhere.join("clarify.db").exists(),
        "a refused restore wrote the database"
    );

    let (ok, said) = clarify(&[
        "backup",
        "/tmp/x.db",
        "--database-url",
        "postgres://127.0.0.1:1/none",
    ])
    .await;
    assert!(!ok && said.contains("pg_dump"), "{said}");
    let _ = std::fs::remove_dir_all(elsewhere);
}
