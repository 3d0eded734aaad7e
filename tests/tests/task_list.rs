//! The task list a person triages from (issue 29 item 4): newest first on
//! request, only those waiting on request, each task with its last
//! activity and its newest question's outcome. Runs on SQLite and, in the
//! test command's second pass, on PostgreSQL.

use clarify_tests::TestServer;
use serde_json::{Value, json};

fn questions() -> Value {
    json!([{"prompt": "Go?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

fn ids(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn newest_first_waiting_only_and_each_tasks_outcome() {
    let server = TestServer::start().await;
    // answered, waiting, declined, then one that never asked.
    let (answered_task, session, agent) = server.session(None).await;
    let answered = server.ask(&session, &agent, questions()).await;
    let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
    assert_eq!(server.respond(&answered, &answer).await.0, 200);
    let (waiting_task, session, agent) = server.session(None).await;
    server.ask(&session, &agent, questions()).await;
    let (declined_task, session, agent) = server.session(None).await;
    let declined = server.ask(&session, &agent, questions()).await;
    assert_eq!(
        server
            .respond(&declined, &json!({"rejected": true}))
            .await
            .0,
        200
    );
    let (_, quiet) = server.post("/tasks", &json!({"title": "quiet"})).await;
    let quiet_task = quiet["id"].as_str().unwrap().to_owned();

    let (status, oldest) = server.get("/tasks").await;
    assert_eq!(status, 200, "{oldest}");
    let all = [
        answered_task.clone(),
        waiting_task.clone(),
        declined_task.clone(),
        quiet_task.clone(),
    ];
    assert_eq!(ids(&oldest), all, "oldest first by default");

    // Newest first, a page of 3 then the rest.
    let (_, first) = server.get("/tasks?order=newest&limit=3").await;
    assert_eq!(ids(&first), [&all[3], &all[2], &all[1]].map(String::clone));
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, rest) = server
        .get(&format!("/tasks?order=newest&limit=3&cursor={cursor}"))
        .await;
    assert_eq!(ids(&rest), std::slice::from_ref(&answered_task));
    assert_eq!(rest["next_cursor"], "");

    let (_, waiting) = server.get("/tasks?waiting=true").await;
    assert_eq!(ids(&waiting), std::slice::from_ref(&waiting_task));
    let (_, padded) = server
        .get("/tasks?waiting=%20true%20&order=%20newest")
        .await;
    assert_eq!(ids(&padded), std::slice::from_ref(&waiting_task));

    let outcome = |id: &str| {
        oldest["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()
            .clone()
    };
    for (id, expected) in [
        (&answered_task, "answered"),
        (&waiting_task, "pending"),
        (&declined_task, "rejected"),
        (&quiet_task, ""),
    ] {
        let task = outcome(id);
        assert_eq!(task["last_outcome"], expected, "{task}");
        let activity = task["last_activity_at"].as_str().unwrap();
        assert!(activity >= task["created_at"].as_str().unwrap(), "{task}");
    }
    // The answer is the answered task's last activity, after its ask.
    let (_, view) = server.get(&format!("/clarification/{answered}")).await;
    assert!(
        outcome(&answered_task)["last_activity_at"]
            .as_str()
            .unwrap()
            >= view["response"]["responded_at"].as_str().unwrap(),
        "{view}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_order_or_waiting_that_is_not_one_is_refused_naming_it() {
    let server = TestServer::start().await;
    for (query, said) in [
        ("order=sideways", "order: oldest or newest"),
        ("waiting=yes", "waiting: true or false"),
    ] {
        let (status, body) = server.get(&format!("/tasks?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"], said);
    }
    server.stop().await;
}
