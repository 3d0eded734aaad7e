//! `GET /tasks` in keyset pages (issue 13): every task once, in order,
//! whatever the page size; bad paging input named.

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
    for (query, field) in [
        ("limit=2.5", "limit:"),
        ("limit=x", "limit:"),
        ("cursor=nope", "cursor"),
    ] {
        let (status, body): (u16, Value) = server.get(&format!("/tasks?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            body["error"].as_str().unwrap().starts_with(field),
            "{query}: {body}"
        );
    }
    server.stop().await;
}
