//! `GET /api/v1/pending` (issue 16: the inbox; the mission's "list pending
//! questions over MCP or REST"): the same page as
//! `list_pending_questions_kandev` (L1–L16), in REST's error shape.

use clarify_tests::TestServer;
use clarify_tests::mcp::{assert_l3_keys, call, connect, ok, pending_ids};
use serde_json::{Value, json};

fn question(prompt: &str) -> Value {
    json!([{"prompt": prompt, "options": [{"label": "yes"}, {"label": "no"}]}])
}

/// `age_seconds` ticks between two reads; everything else must agree.
fn without_ages(mut page: Value) -> Value {
    for bundle in page["bundles"].as_array_mut().unwrap() {
        bundle.as_object_mut().unwrap().remove("age_seconds");
    }
    page
}

/// `page` without the HTML the server renders for the browser (REST only,
/// issue 31 item 4), which each bundle must carry.
fn without_html(mut page: Value) -> Value {
    for bundle in page["bundles"].as_array_mut().unwrap() {
        let html = bundle.as_object_mut().unwrap().remove("html");
        let prompt = &bundle["questions"][0]["prompt"];
        assert_eq!(
            html.as_ref().map(|h| &h["q1.prompt"]),
            Some(&json!(format!("<p>{}</p>", prompt.as_str().unwrap()))),
            "the prompt rendered: {html:?}"
        );
    }
    page
}

#[tokio::test]
async fn rest_lists_exactly_what_mcp_lists_oldest_first_and_pages() {
    let server = TestServer::start().await;
    let mut asked = Vec::new();
    for prompt in ["First?", "Second?", "Third?"] {
        let (_, session, agent) = server.session(None).await;
        asked.push(server.ask(&session, &agent, question(prompt)).await);
    }

    let (status, rest) = server.get("/pending").await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(pending_ids(&rest), asked, "L5 oldest first: {rest}");
    assert_l3_keys(&rest["bundles"][0]);
    let client = connect(&server, "/mcp", None).await;
    let listed = ok(&call(&client, "list_pending_questions_kandev", &json!({})).await);
    assert!(listed["bundles"][0].get("html").is_none(), "{listed}");
    assert_eq!(without_ages(without_html(rest)), without_ages(listed));

    // L9: keyset pages of one.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    loop {
        let (status, page) = server
            .get(&format!("/pending?limit=1&cursor={cursor}"))
            .await;
        assert_eq!(status, 200, "{page}");
        seen.extend(pending_ids(&page));
        cursor = page["next_cursor"].as_str().unwrap().to_owned();
        if cursor.is_empty() {
            break;
        }
    }
    assert_eq!(seen, asked);
    server.stop().await;
}

#[tokio::test]
async fn l13_a_bad_query_is_a_400_naming_it() {
    let server = TestServer::start().await;
    for (query, field) in [
        ("limit=ten", "limit"),
        ("cursor=%%%", "cursor"),
        ("created_since=yesterday", "created_since"),
    ] {
        let (status, body) = server.get(&format!("/pending?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        let message = body["error"].as_str().unwrap();
        assert!(message.contains(field), "{query}: {message}");
    }
    server.stop().await;
}

#[tokio::test]
async fn under_auth_an_agent_token_cannot_list() {
    let server = TestServer::start_with_auth().await;
    let alice = server.token("alice").await;
    let (_, session, agent) = server.as_token(&alice).session(None).await;
    server.ask(&session, &agent, question("Mine?")).await;
    let (status, body) = server.as_token(&agent).get("/pending").await;
    assert!(
        matches!(status, 401 | 403),
        "agents ask and wait, they do not answer: {body}"
    );
    server.stop().await;
}
