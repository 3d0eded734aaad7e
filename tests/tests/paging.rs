//! Lists in keyset pages: `GET /tasks` (issue 13), a session's transcript
//! and a bundle's attempts log (issue 26, item 6): every item once, in
//! order, whatever the page size; bad paging input named.

use clarify_tests::TestServer;
use serde_json::{Value, json};

#[tokio::test]
async fn tasks_come_in_pages_each_task_once_in_creation_order() {
    let server = TestServer::start().await;
    let mut created = Vec::new();
    for n in 0..7 {
        let (status, task) = server
            .post("/tasks", &json!({"title": format!("task {n}")}))
            .await;
        assert_eq!(status, 201);
        created.push(task["id"].as_str().unwrap().to_owned());
    }
    let mut seen = Vec::new();
    let mut path = "/tasks?limit=3".to_owned();
    let mut pages = 0;
    loop {
        let (status, page) = server.get(&path).await;
        assert_eq!(status, 200, "{page}");
        pages += 1;
        let tasks = page["tasks"].as_array().unwrap();
        assert!(tasks.len() <= 3);
        seen.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_owned()));
        for task in tasks {
            assert!(
                task.as_object()
                    .unwrap()
                    .contains_key("task_pending_action"),
                "{task}"
            );
        }
        let next = page["next_cursor"].as_str().unwrap();
        if next.is_empty() {
            break;
        }
        path = format!("/tasks?limit=3&cursor={next}");
    }
    assert_eq!(seen, created, "each task once, oldest first");
    assert_eq!(pages, 3);
    // Without a limit: the default page (50) holds them all.
    let (_, all) = server.get("/tasks").await;
    assert_eq!(all["tasks"].as_array().unwrap().len(), 7);
    assert_eq!(all["next_cursor"], "");
    server.stop().await;
}

#[tokio::test]
async fn bad_paging_input_is_a_400_naming_it() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, one_question(0)).await;
    for list in [
        "/tasks".to_owned(),
        format!("/sessions/{session}/messages"),
        format!("/clarification/{pending}/attempts"),
    ] {
        for (query, field) in [
            ("limit=2.5", "limit:"),
            ("limit=x", "limit:"),
            // Whitespace is not empty (Schemathesis found it read as
            // absent, which the document refuses).
            ("limit=%0D", "limit:"),
            ("limit=%207", "limit:"),
            ("cursor=nope", "cursor"),
        ] {
            let (status, body): (u16, Value) = server.get(&format!("{list}?{query}")).await;
            assert_eq!(status, 400, "{list}?{query}: {body}");
            assert!(
                body["error"].as_str().unwrap().starts_with(field),
                "{list}?{query}: {body}"
            );
        }
    }
    server.stop().await;
}

fn one_question(n: usize) -> Value {
    json!([{"prompt": format!("Question {n}?"), "options": [{"label": "a"}, {"label": "b"}]}])
}

/// Every page of `list` (a path without a query) at `limit`, by its
/// `next_cursor`: the items under `key` of each page.
async fn all_pages(server: &TestServer, list: &str, key: &str, limit: usize) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut path = format!("{list}?limit={limit}");
    loop {
        let (status, page) = server.get(&path).await;
        assert_eq!(status, 200, "{path}: {page}");
        pages.push(page[key].as_array().unwrap().clone());
        let next = page["next_cursor"].as_str().unwrap();
        if next.is_empty() {
            return pages;
        }
        path = format!("{list}?limit={limit}&cursor={next}");
    }
}

#[tokio::test]
async fn a_session_s_transcript_comes_in_pages_each_message_once() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    for n in 0..7 {
        server.ask(&session, &agent, one_question(n)).await;
    }
    let list = format!("/sessions/{session}/messages");
    let (_, whole) = server.get(&format!("{list}?limit=200")).await;
    let whole = whole["messages"].as_array().unwrap().clone();
    assert_eq!(whole.len(), 7, "one message per question");
    let pages = all_pages(&server, &list, "messages", 3).await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3, 1]);
    assert_eq!(pages.concat(), whole, "every message once, in order");
    server.stop().await;
}

#[tokio::test]
async fn a_bundle_s_attempts_come_in_pages_the_winner_first() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, one_question(0)).await;
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    for _ in 0..6 {
        server.respond(&pending, &pick).await;
    }
    let list = format!("/clarification/{pending}/attempts");
    let (_, whole) = server.get(&format!("{list}?limit=200")).await;
    let whole = whole["attempts"].as_array().unwrap().clone();
    let outcomes: Vec<&str> = whole
        .iter()
        .map(|a| a["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["won", "lost", "lost", "lost", "lost", "lost"]);
    // Issue 45 item 8b: `limit` bounds what comes back, the winner counted
    // (`limit=2` answered three), and the pages still hold each once.
    for (limit, sizes) in [(2, &[2, 2, 2][..]), (1, &[1; 6][..]), (5, &[5, 1][..])] {
        let pages = all_pages(&server, &list, "attempts", limit).await;
        assert_eq!(
            pages.iter().map(Vec::len).collect::<Vec<_>>(),
            sizes,
            "limit={limit}, the winner first: {pages:?}"
        );
        assert_eq!(pages.concat(), whole, "limit={limit}: each attempt once");
    }
    server.stop().await;
}

/// Issue 45 item 8b, its edge: a bundle answered once, nothing lost: `limit=1` is the
/// winner alone and the last page.
#[tokio::test]
async fn a_winner_alone_is_one_page_at_limit_one() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server.ask(&session, &agent, one_question(0)).await;
    let pick = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    server.respond(&pending, &pick).await;
    let list = format!("/clarification/{pending}/attempts");
    let pages = all_pages(&server, &list, "attempts", 1).await;
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert_eq!(pages[0].len(), 1, "{pages:?}");
    assert_eq!(pages[0][0]["outcome"], "won");
    server.stop().await;
}
