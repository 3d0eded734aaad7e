//! Answer links (issue 28, item 1): a notice of a one-question bundle
//! carries one link per option. A `GET` (a link preview, a mail scanner)
//! answers nothing; a `POST` answers through the one claim, recorded as
//! channel `link` with the target that carried it; a later press is told
//! the winner. The link is a capability for that bundle and option only.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::{NoticeSink, TestServer};
use serde_json::{Value, json};

fn one_question() -> Value {
    json!([{"prompt": "Ship <b>now</b>?", "options": [{"label": "yes"}, {"label": "no"}]}])
}

fn notifying(sink: &NoticeSink) -> Config {
    Config {
        notify_webhooks: vec![sink.url()],
        notify_first_retry: Some(Duration::from_millis(300)),
        ..Config::default()
    }
}

/// The `waiting` notice the sink got for `pending`.
async fn waiting(sink: &NoticeSink, pending: &str) -> Value {
    sink.accepted(&format!("{pending}:waiting")).await
}

/// The action of `notice` for `option_id`, as a path on the server (the
/// notice's links use the server's public URL; the test's server has its
/// own address).
fn link(notice: &Value, option_id: &str) -> String {
    let url = notice["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["option_id"] == option_id)
        .unwrap_or_else(|| panic!("no action for {option_id}: {notice}"))["url"]
        .as_str()
        .expect("url")
        .to_owned();
    let at = url.find("/answer/").expect("an /answer/ link");
    url[at..].to_owned()
}

/// A request to `path` as a phone's notification app or a link preview
/// sends it: no cookie, no token, no `Origin`.
async fn press(server: &TestServer, method: reqwest::Method, path: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .request(method, server.url(path))
        .send()
        .await
        .expect("reachable");
    let status = response.status().as_u16();
    assert_eq!(
        response.headers()["cache-control"],
        "no-store",
        "a capability's page is never cached"
    );
    (status, response.text().await.expect("body"))
}

async fn status_of(server: &TestServer, pending: &str) -> Value {
    let (code, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(code, 200, "{view}");
    view
}

#[tokio::test]
async fn one_tap_answers_once_a_preview_answers_nothing_and_a_later_press_is_told_the_winner() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let (pending, _task, _agent) = server.ask_expiring(one_question(), None).await;
    let notice = waiting(&sink, &pending).await;
    let actions = notice["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 2, "{notice}");
    assert_eq!(
        (&actions[0]["label"], &actions[0]["option_id"]),
        (&json!("yes"), &json!("q1_opt1"))
    );
    let (yes, no) = (link(&notice, "q1_opt1"), link(&notice, "q1_opt2"));
    assert_ne!(yes, no, "each option has its own capability");

    // A link preview or a mail scanner fetches it: nothing is answered.
    for _ in 0..3 {
        let (code, page) = press(&server, reqwest::Method::GET, &no).await;
        assert_eq!(code, 200);
        assert!(page.contains("Ship &lt;b&gt;now&lt;/b&gt;?"), "{page}");
        assert!(
            page.contains("Confirm: no") && page.contains("<form method=\"post\""),
            "{page}"
        );
    }
    assert_eq!(status_of(&server, &pending).await["status"], "pending");

    // The press outlives a restart: links are stored, not held in memory.
    let server = server.restart().await;
    let (code, page) = press(&server, reqwest::Method::POST, &no).await;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("data-outcome=\"won\""), "{page}");
    let view = status_of(&server, &pending).await;
    assert_eq!(view["status"], "answered");
    assert_eq!(
        view["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"])
    );
    assert_eq!(
        view["answered_by"],
        json!({"user": "anonymous", "channel": "link", "client": "127.0.0.1"}),
        "the link names the target that carried it"
    );

    // A later press, of the other option or the same one: told the winner,
    // nothing changes.
    for path in [&yes, &no] {
        let (code, page) = press(&server, reqwest::Method::POST, path).await;
        assert_eq!(code, 200);
        assert!(page.contains("data-outcome=\"lost\""), "{page}");
        assert!(
            page.contains(
                "Already answered by anonymous through an answer link: <strong>no</strong>"
            ),
            "{page}"
        );
    }
    let (_, page) = press(&server, reqwest::Method::GET, &yes).await;
    assert!(!page.contains("<form"), "no button once answered: {page}");
    assert_eq!(
        status_of(&server, &pending).await["response"],
        view["response"]
    );

    let resolved = sink.accepted(&format!("{pending}:resolved")).await;
    assert_eq!(
        resolved["actions"],
        json!([]),
        "only a waiting notice links"
    );
    assert_eq!(resolved["answered_by"]["channel"], "link");
    server.stop().await;
}

#[tokio::test]
async fn only_a_one_question_single_choice_bundle_gets_links() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let two = json!([
        {"prompt": "First?", "options": [{"label": "a"}, {"label": "b"}]},
        {"prompt": "Second?", "options": [{"label": "c"}, {"label": "d"}]}
    ]);
    let multi = json!([{"prompt": "Which?", "multi_select": true,
        "options": [{"label": "a"}, {"label": "b"}]}]);
    for questions in [two, multi] {
        let (pending, _, _) = server.ask_expiring(questions, None).await;
        let notice = waiting(&sink, &pending).await;
        assert_eq!(notice["actions"], json!([]), "{notice}");
        assert!(notice["url"].as_str().unwrap().contains("/t/"), "{notice}");
    }
    server.stop().await;
}

#[tokio::test]
async fn forged_foreign_and_cross_site_presses_are_refused_and_change_nothing() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let (first, _, _) = server.ask_expiring(one_question(), None).await;
    let (second, _, _) = server.ask_expiring(one_question(), None).await;
    let first_link = link(&waiting(&sink, &first).await, "q1_opt1");
    waiting(&sink, &second).await;

    let forged = format!("/answer/clk_link_{}", "0".repeat(48));
    for path in [forged.as_str(), "/answer/clk_pat_abc", "/answer/x"] {
        for method in [reqwest::Method::GET, reqwest::Method::POST] {
            let (code, page) = press(&server, method, path).await;
            assert_eq!(code, 404, "{path}: {page}");
            assert!(page.contains("not valid"), "{page}");
        }
    }
    // A cross-site form cannot use a link it learned.
    for (name, value) in [
        ("origin", "https://evil.example"),
        ("sec-fetch-site", "cross-site"),
    ] {
        let refused = reqwest::Client::new()
            .post(server.url(&first_link))
            .header(name, value)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 403, "{name}");
    }
    assert_eq!(status_of(&server, &first).await["status"], "pending");

    // One bundle's link answers that bundle only.
    let (code, _) = press(&server, reqwest::Method::POST, &first_link).await;
    assert_eq!(code, 200);
    assert_eq!(status_of(&server, &first).await["status"], "answered");
    assert_eq!(status_of(&server, &second).await["status"], "pending");

    // A bundle that stopped waiting unanswered: the link is useless.
    let (_, third_link) = {
        let (third, _, _) = server.ask_expiring(one_question(), None).await;
        let path = link(&waiting(&sink, &third).await, "q1_opt2");
        let (code, _) = server
            .post(&format!("/clarification/{third}/cancel"), &json!({}))
            .await;
        assert!(code < 300);
        (third, path)
    };
    let (code, page) = press(&server, reqwest::Method::POST, &third_link).await;
    assert_eq!(code, 409, "{page}");
    assert!(page.contains("no longer waiting"), "{page}");
    server.stop().await;
}

#[tokio::test]
async fn links_and_the_api_racing_for_one_bundle_have_exactly_one_winner() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    for round in 0..20 {
        let (pending, _, _) = server.ask_expiring(one_question(), None).await;
        let notice = waiting(&sink, &pending).await;
        let (yes, no) = (link(&notice, "q1_opt1"), link(&notice, "q1_opt2"));
        let answer = json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"]}]});
        let (a, b, c, api) = tokio::join!(
            press(&server, reqwest::Method::POST, &yes),
            press(&server, reqwest::Method::POST, &no),
            press(&server, reqwest::Method::POST, &no),
            server.respond(&pending, &answer),
        );
        let won_by_link = [&a, &b, &c]
            .iter()
            .filter(|(_, page)| page.contains("data-outcome=\"won\""))
            .count();
        assert_eq!(api.0, 200, "round {round}: {}", api.1);
        let won_by_api = usize::from(api.1["claimed"] == true);
        assert_eq!(won_by_link + won_by_api, 1, "round {round}: one winner");
        let view = status_of(&server, &pending).await;
        let chosen = &view["response"]["answers"][0]["selected_options"];
        // Every loser was told the same answer the bundle holds.
        assert_eq!(&api.1["response"]["answers"][0]["selected_options"], chosen);
        let label = if chosen == &json!(["q1_opt1"]) {
            "yes"
        } else {
            "no"
        };
        for (_, page) in [&a, &b, &c] {
            assert!(
                page.contains(&format!("<strong>{label}</strong>")),
                "round {round}: {page}"
            );
        }
    }
    server.stop().await;
}

/// Issue 45 item 1: Chromium posts the link page's Confirm with `Origin:
/// null` under a `no-referrer` policy, and the same-origin layer refused
/// it with raw JSON. The page now keeps its origin for itself
/// (`Referrer-Policy: same-origin`) and a `null` origin vouched for by
/// `Sec-Fetch-Site: same-origin` is served; a cross-site one still is not.
/// (e2e/tests/answer_link.spec.ts presses it in Chromium.)
#[tokio::test]
async fn the_confirm_of_the_links_own_page_answers_as_a_browser_posts_it() {
    let sink = NoticeSink::start(0).await;
    let server = TestServer::start_with(notifying(&sink)).await;
    let (pending, _, _) = server.ask_expiring(one_question(), None).await;
    let path = link(&waiting(&sink, &pending).await, "q1_opt1");

    let shown = reqwest::get(server.url(&path)).await.unwrap();
    assert_eq!(shown.headers()["referrer-policy"], "same-origin");
    let csp = shown.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("style-src 'self'"), "{csp}");
    let page = shown.text().await.unwrap();
    let sheet = page
        .split("<link rel=\"stylesheet\" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no stylesheet: {page}"));
    let css = reqwest::get(server.url(sheet)).await.unwrap();
    assert_eq!(css.status(), 200, "the overlay's stylesheet is served");

    let post = |site: &'static str| {
        reqwest::Client::new()
            .post(server.url(&path))
            .header("origin", "null")
            .header("sec-fetch-site", site)
            .header("content-type", "application/x-www-form-urlencoded")
            .send()
    };
    let refused = post("cross-site").await.unwrap();
    assert_eq!(refused.status(), 403, "a sandboxed foreign page");
    assert_eq!(status_of(&server, &pending).await["status"], "pending");

    let answered = post("same-origin").await.unwrap();
    assert_eq!(answered.status(), 200);
    assert!(
        answered.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"),
        "a page, never JSON"
    );
    let page = answered.text().await.unwrap();
    assert!(page.contains("data-outcome=\"won\""), "{page}");
    let view = status_of(&server, &pending).await;
    assert_eq!(view["status"], "answered");
    assert_eq!(view["answered_by"]["channel"], "link");
    server.stop().await;
}
