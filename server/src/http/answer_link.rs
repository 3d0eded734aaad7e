//! `/answer/{token}` (issue 28): an answer link's own small page. `GET`
//! only shows what it would answer, with a Confirm button, because chat
//! apps, mail scanners and link previews fetch links; `POST` (the button,
//! or a phone notification's action) answers through the one claim. The
//! token is the only right the request needs or gets: no cookie or bearer
//! token is read, and a cross-site form is refused by the same-origin
//! layer before it gets here.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};

use super::error::Error;
use crate::lifecycle::{self as domain, LINK_PATH, LinkPage, LinkState};
use crate::state::AppState;

/// The page's policy: nothing to load, a form that posts only to us.
const LINK_CSP: &str =
    "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// `GET` and `POST /answer/{token}`.
pub fn routes() -> Router<AppState> {
    Router::new().route(&format!("{LINK_PATH}/{{token}}"), get(show).post(answer))
}

async fn show(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    respond(state.lifecycle.link_page(&token).await, &token)
}

async fn answer(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    respond(state.lifecycle.answer_by_link(&token).await, &token)
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
                "<p>This answer link is not valid. Open Clarify to answer.</p>",
            ),
        ),
        Err(other) => return Error::from(other).into_response(),
    };
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LINK_CSP),
    );
    // The URL is a capability: no cache may keep the page.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The page for `page`, whose Confirm button posts back to `token`.
fn render(page: &LinkPage, token: &str) -> String {
    let mut body = format!("<p class=\"task\">{}</p>", text(&page.task));
    if !page.title.is_empty() {
        body.push_str(&format!("<h2>{}</h2>", text(&page.title)));
    }
    body.push_str(&format!("<p class=\"prompt\">{}</p>", text(&page.prompt)));
    match &page.state {
        LinkState::Open => body.push_str(&format!(
            "<form method=\"post\" action=\"{}/{}\">\
             <button type=\"submit\">Confirm: {}</button></form>",
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
            let who = by.as_ref().map_or(String::new(), |by| {
                let channel = clarify_core::Channel::phrase(&by.channel);
                format!(" by {} {}", text(&by.user), text(channel))
            });
            body.push_str(&format!(
                "<p role=\"status\" data-outcome=\"{}\">{lead}{who}: <strong>{}</strong></p>",
                if *ours { "won" } else { "lost" },
                text(answer),
            ));
        }
        LinkState::Closed => body.push_str(
            "<p role=\"status\" data-outcome=\"closed\">This question is no longer waiting \
             for an answer.</p>",
        ),
    }
    document(&page.prompt, &body)
}

fn document(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · Clarify</title></head><body><main>{body}</main></body></html>",
        text(title),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(state: LinkState) -> LinkPage {
        LinkPage {
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
