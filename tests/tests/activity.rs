//! The Activity figures and page (issue 49 item 2): questions per day,
//! time to answer, answers by channel and person, who asks most, what
//! waits longest — only what the viewer may see (A1-A3), everything for an
//! admin, nothing for an agent; the page is HTML whose every chart has its
//! numbers in a table, and what an agent wrote stays text.

use clarify_tests::TestServer;
use serde_json::{Value, json};

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "Yes"}, {"label": "No"}]}])
}

/// GETs `path` as `token` (none: no credential): status, content type, body.
async fn get(server: &TestServer, token: Option<&str>, path: &str) -> (u16, String, String) {
    let mut request = server.client().get(server.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, kind, response.text().await.unwrap())
}

async fn figures(server: &TestServer, token: &str, query: &str) -> Value {
    let (status, _, body) = get(server, Some(token), &format!("/api/v1/activity{query}")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Answers `pending` as `token` through `client` (`x-clarify-client`,
/// `""` for plain REST), or declines it.
async fn settle(server: &TestServer, token: &str, pending: &str, client: &str, decline: bool) {
    let body = if decline {
        json!({"rejected": true, "reject_reason": "not now"})
    } else {
        json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]})
    };
    let mut request = server
        .client()
        .post(server.url(&format!("/api/v1/clarification/{pending}/respond")))
        .bearer_auth(token)
        .json(&body);
    if !client.is_empty() {
        request = request.header("x-clarify-client", client);
    }
    assert_eq!(request.send().await.unwrap().status(), 200);
}

/// Issue 49 item 2: alice's figures count her workspace's questions only
/// (3 asked, 2 settled by her through two channels, a decline counted, 1
/// waiting), bob's his, an admin's both; the span's days are each there;
/// an agent is refused, a missing credential too, and a bad `days` is
/// named.
#[tokio::test]
async fn the_figures_count_only_what_the_viewer_may_see() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let bob = server.token("bob").await;
    let admin = server.admin_token("operator").await;

    let her = server.as_token(&alice);
    let (_, workspace) = her.post("/workspaces", &json!({"name": "hers"})).await;
    let (task, session, agent) = her
        .session_in(workspace["id"].as_str().unwrap(), None)
        .await;
    let mut asked = Vec::new();
    for prompt in ["Ship it?", "Rename it?", "Wait <b>here</b>?"] {
        asked.push(server.ask(&session, &agent, question(prompt)).await);
    }
    settle(&server, &alice, &asked[0], "", false).await;
    settle(&server, &alice, &asked[1], "cli", true).await;

    let him = server.as_token(&bob);
    let (_, workspace) = him.post("/workspaces", &json!({"name": "his"})).await;
    let (_, his_session, his_agent) = him
        .session_in(workspace["id"].as_str().unwrap(), None)
        .await;
    let his = server.ask(&his_session, &his_agent, question("His?")).await;
    settle(&server, &bob, &his, "", false).await;

    let mine = figures(&server, &alice, "").await;
    assert_eq!(
        (mine["asked"].as_u64(), mine["answered"].as_u64()),
        (Some(3), Some(2)),
        "{mine}"
    );
    assert_eq!(mine["days"], 14);
    assert_eq!(mine["sampled"], false);
    let days = mine["per_day"].as_array().unwrap();
    assert_eq!(days.len(), 14, "{mine}");
    let today = &days[13];
    assert_eq!(
        (today["asked"].as_u64(), today["answered"].as_u64()),
        (Some(3), Some(2))
    );
    let (median, p90) = (
        today["median_seconds"].as_f64().unwrap(),
        today["p90_seconds"].as_f64().unwrap(),
    );
    assert!((0.0..=p90).contains(&median) && p90 < 60.0, "{today}");
    assert!(
        days[..13]
            .iter()
            .all(|d| d["asked"] == 0 && d["median_seconds"].is_null())
    );
    let channels: Vec<(&str, u64)> = mine["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(channels, [("cli", 1), ("rest", 1)], "{mine}");
    assert_eq!(
        mine["people"],
        json!([{"id": "alice", "name": "alice", "count": 2}])
    );
    assert_eq!(
        mine["tasks"],
        json!([{"id": task, "name": "a task", "count": 3}])
    );
    assert_eq!(mine["agents"][0]["id"], session.as_str());
    let waiting = mine["waiting"].as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{mine}");
    assert_eq!(waiting[0]["pending_id"], asked[2].as_str());
    assert_eq!(waiting[0]["prompt"], "Wait <b>here</b>?");

    let his_view = figures(&server, &bob, "?days=7").await;
    assert_eq!(
        (his_view["asked"].as_u64(), his_view["answered"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(his_view["per_day"].as_array().unwrap().len(), 7);
    assert_eq!(his_view["waiting"], json!([]));
    let all = figures(&server, &admin, "").await;
    assert_eq!(
        (all["asked"].as_u64(), all["answered"].as_u64()),
        (Some(4), Some(3)),
        "{all}"
    );

    assert_eq!(get(&server, Some(&agent), "/api/v1/activity").await.0, 403);
    assert_eq!(get(&server, None, "/api/v1/activity").await.0, 401);
    for days in ["0", "91", "two", "-1", "1.5", "%0B", "%2014", "14%20"] {
        let (status, _, body) = get(
            &server,
            Some(&alice),
            &format!("/api/v1/activity?days={days}"),
        )
        .await;
        assert_eq!(status, 400, "{days}: {body}");
        assert!(body.contains("days"), "{days}: {body}");
    }
    server.stop().await;
}

/// Issue 49 item 2: the page is HTML under a strict policy, each chart a
/// picture only with its numbers in a table, what the agent wrote is text,
/// and without a credential it says to log in (nothing of the team shown).
#[tokio::test]
async fn the_page_shows_each_charts_numbers_in_a_table() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let her = server.as_token(&alice);
    let (_, workspace) = her.post("/workspaces", &json!({"name": "hers"})).await;
    let (_, session, agent) = her
        .session_in(workspace["id"].as_str().unwrap(), None)
        .await;
    let first = server.ask(&session, &agent, question("Ship it?")).await;
    server
        .ask(&session, &agent, question("Later <script>x</script>?"))
        .await;
    settle(&server, &alice, &first, "", false).await;

    let response = server
        .client()
        .get(server.url("/activity?days=7"))
        .header(
            "cookie",
            server.login(&alice).await.split(';').next().unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let html = response.text().await.unwrap();
    assert!(
        html.contains("<strong>2</strong> asked, <strong>1</strong> answered"),
        "{html}"
    );
    assert_eq!(
        html.matches("<svg class=\"chart per-day\"").count(),
        2,
        "{html}"
    );
    assert!(html.contains("aria-hidden=\"true\""));
    assert_eq!(
        html.matches("<table").count(),
        6,
        "per day, channel, person, task, agent, waiting: {html}"
    );
    assert!(html.contains("<td>2</td><td>1</td>"), "today's row: {html}");
    assert!(html.contains("rest (over the REST API)"), "{html}");
    assert!(html.contains("aria-current=\"page\">7 days</a>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(
        html.contains("Later &lt;script&gt;x&lt;/script&gt;?"),
        "waiting longest: {html}"
    );

    let (status, kind, html) = get(&server, None, "/activity").await;
    assert_eq!(status, 401);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(html.contains("href=\"/login\""), "{html}");
    assert!(!html.contains("Later"), "{html}");
    let (status, _, html) = get(&server, Some(&alice), "/activity?days=365").await;
    assert_eq!(status, 400);
    assert!(
        html.contains("days: must be a whole number from 1 to 90"),
        "{html}"
    );
    server.stop().await;
}
