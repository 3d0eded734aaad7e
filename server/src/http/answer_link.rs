//! `/answer/{token}` (issue 28): an answer link's own small page. `GET`
//! only shows what it would answer, with a Confirm button, because chat
//! apps, mail scanners and link previews fetch links; `POST` (the button,
//! or a phone notification's action) answers through the one claim. The
//! token is the only right the request needs or gets: no cookie or bearer
//! token is read, and a cross-site form is refused by the same-origin
//! layer before it gets here.
//!
//! Every outcome is a page styled like the overlay (its stylesheet, light
//! and dark, phone width), never the API's JSON (issue 45 item 1).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};

use super::error::Error;
use crate::lifecycle::{self as domain, LINK_PATH, LinkPage, LinkState};
use crate::state::AppState;

/// The page's policy: our own stylesheet, a form that posts only to us,
/// nothing else.
const LINK_CSP: &str = "default-src 'none'; style-src 'self'; form-action 'self'; \
     base-uri 'none'; frame-ancestors 'none'";

/// The Confirm form's POST must carry this page's own `Origin`: under the
/// server-wide `no-referrer`, Chromium sends `Origin: null`, which the
/// same-origin layer cannot tell from a sandboxed foreign page (issue 45
/// item 1). The page links nowhere else, so its capability URL never
/// leaves in a `Referer`.
const LINK_REFERRER_POLICY: &str = "same-origin";

/// `GET` and `POST /answer/{token}`.
pub fn routes() -> Router<AppState> {
    Router::new().route(&format!("{LINK_PATH}/{{token}}"), get(show).post(answer))
}

async fn show(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    respond(state.lifecycle.resolving.link_page(&token).await, &token)
}

async fn answer(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    respond(
        state.lifecycle.resolving.answer_by_link(&token).await,
        &token,
    )
}

fn respond(page: domain::Result<LinkPage>, token: &str) -> Response {
    let (status, body) = match page {
        Ok(page) => {
            let status = match page.state {
                LinkState::Closed => StatusCode::CONFLICT,
                _ => StatusCode::OK,
            };
            (status, render(&page, token))
        }
        Err(domain::Error::NotFound(_)) => (
            StatusCode::NOT_FOUND,
            document(
                "Not a valid answer link",
                "<h2>Not a valid answer link</h2>\
                 <p role=\"status\" data-outcome=\"unknown\">This answer link is not valid. \
                 Open Clarify to answer.</p>",
            ),
        ),
        Err(other) => {
            // The API's message (never an internal detail, which the
            // error logs), on a page rather than as JSON.
            let error = Error::from(other);
            let status = error.status_code();
            if let Error::Internal(cause) = &error {
                tracing::error!(error = %cause, "internal error");
            }
            let body = format!(
                "<h2>Not answered</h2><p role=\"alert\" data-outcome=\"failed\">{}</p>\
                 <p class=\"hint\">Nothing was recorded. Go back and confirm again.</p>",
                text(&error.to_string()),
            );
            (status, document("Not answered", &body))
        }
    };
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LINK_CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static(LINK_REFERRER_POLICY),
    );
    // The URL is a capability: no cache may keep the page.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The page for `page`, whose Confirm button posts back to `token`.
fn render(page: &LinkPage, token: &str) -> String {
    let mut body = format!("<p class=\"row-task\">{}</p>", text(&page.task));
    if !page.title.is_empty() {
        body.push_str(&format!("<h2>{}</h2>", text(&page.title)));
    }
    if let Some(call) = &page.tool_call {
        body.push_str(&format!(
            "<p class=\"tool\">{}</p><pre class=\"call\"><code>{}</code></pre>",
            text(&call.tool),
            text(&call.call)
        ));
    }
    body.push_str(&format!("<p class=\"prompt\">{}</p>", text(&page.prompt)));
    match &page.state {
        LinkState::Open => body.push_str(&format!(
            "<form method=\"post\" action=\"{}/{}\">\
             <button type=\"submit\" data-testid=\"link-confirm\">Confirm: {}</button></form>\
             <p class=\"hint\">Nothing is answered until you confirm.</p>",
            LINK_PATH,
            attr(token),
            text(&page.option),
        )),
        LinkState::Answered { by, answer, ours } => {
            let lead = if *ours {
                "Answered"
            } else {
                "Already answered"
            };
            // Who won matters only to a press that lost.
            let who = by.as_ref().filter(|_| !*ours).map_or(String::new(), |by| {
                let channel = clarify_core::Channel::phrase(&by.channel);
                format!(" by {} {}", text(&by.user), text(channel))
            });
            let (outcome, after) = if *ours {
                ("won", "Your answer was sent to the agent.")
            } else {
                (
                    "lost",
                    "Your press changed nothing: the first answer counts.",
                )
            };
            body.push_str(&format!(
                "<p role=\"status\" class=\"outcome {outcome}\" data-outcome=\"{outcome}\">\
                 {lead}{who}: <strong>{}</strong></p><p class=\"hint\">{after}</p>",
                text(answer),
            ));
        }
        LinkState::Closed => body.push_str(
            "<p role=\"status\" class=\"outcome closed\" data-outcome=\"closed\">This question \
             is no longer waiting for an answer.</p>",
        ),
    }
    document(&page.prompt, &body)
}

fn document(title: &str, body: &str) -> String {
    super::page::document(
        super::page::Heading::Plain,
        title,
        "Answer link",
        "overlay link-page",
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(state: LinkState) -> LinkPage {
        LinkPage {
            tool_call: None,
            task: "Migrate <b>".into(),
            title: String::new(),
            prompt: "Which \"database\"?".into(),
            option: "<script>alert(1)</script>".into(),
            state,
        }
    }

    #[test]
    fn what_an_agent_wrote_is_text_never_markup() {
        let html = render(&page(LinkState::Open), "clk_link_ab");
        assert!(html.contains("Migrate &lt;b&gt;"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("action=\"/answer/clk_link_ab\""), "{html}");
    }

    /// issue 47 item 1: an approval's call is shown as code, as text.
    #[test]
    fn an_approvals_call_is_shown_as_code() {
        let mut approval = page(LinkState::Open);
        approval.tool_call = Some(clarify_core::ToolCall {
            tool: "Bash".into(),
            call: "rm -rf <build>".into(),
        });
        let html = render(&approval, "clk_link_x");
        assert!(
            html.contains("<pre class=\"call\"><code>rm -rf &lt;build&gt;</code></pre>"),
            "{html}"
        );
    }

    #[test]
    fn the_page_links_the_overlays_stylesheet() {
        let html = render(&page(LinkState::Open), "t");
        let sheet = format!(
            "<link rel=\"stylesheet\" href=\"{}\">",
            crate::web_assets::STYLESHEET
        );
        assert!(html.contains(&sheet), "{html}");
    }

    #[test]
    fn a_later_press_is_told_the_winner() {
        let state = LinkState::Answered {
            by: Some(clarify_core::AnsweredBy::new(
                "alice",
                clarify_core::Channel::Browser,
                "",
            )),
            answer: "Postgres".into(),
            ours: false,
        };
        let html = render(&page(state), "t");
        assert!(
            html.contains("Already answered by alice in the browser: <strong>Postgres</strong>"),
            "{html}"
        );
        assert!(!html.contains("<form"), "{html}");
    }
}
