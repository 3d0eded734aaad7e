//! Who else tried to answer a settled bundle, and when (issue 46 item 9):
//! the API's attempts log, under the bundle's card in the transcript.

use clarify_core::AnsweredBy;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::Value;

use crate::html::escape;
use crate::transcript::seconds_between;

/// One attempt as a person reads it: "Tried by bob in Slack, 2 min after
/// it was asked: too late, someone had answered".
fn line(attempt: &Value, asked_at: &str) -> String {
    let text = |key: &str| attempt[key].as_str().unwrap_or_default().to_owned();
    let by = AnsweredBy {
        user: text("user"),
        channel: text("channel"),
        client: text("client"),
        ..AnsweredBy::default()
    };
    let (verb, after) = match attempt["outcome"].as_str() {
        Some("won") => ("Answered", ""),
        Some("lost") => ("Tried", ": too late, someone had answered"),
        _ => ("Tried", ": it had closed"),
    };
    let when = seconds_between(asked_at, &text("at"));
    format!("{}{after}", by.describe_as(verb, when))
}

/// The log as static markup, once it holds more than the winner.
fn markup(log: &Value, asked_at: &str) -> Option<String> {
    let list = log["attempts"].as_array()?;
    if list.len() < 2 {
        return None;
    }
    let items: String = list
        .iter()
        .map(|a| format!("<li>{}</li>", escape(&line(a, asked_at))))
        .collect();
    Some(format!(
        "<summary>{} tried to answer</summary><ul>{items}</ul>",
        list.len()
    ))
}

/// Fills each settled bundle's log box in the page (`details.attempts`
/// with its `data-pending-id`). Written into the page rather than made a
/// view: the transcript is static markup, and a view per log cost the wasm
/// more than the log itself. Fetched again when the transcript is redrawn:
/// a later loser then shows too.
pub fn fill(bundles: Vec<(String, String)>) {
    for (pending_id, asked_at) in bundles {
        spawn_local(async move {
            let Some(html) = crate::api::attempts(&pending_id)
                .await
                .ok()
                .and_then(|log| markup(&log, &asked_at))
            else {
                return;
            };
            let selector = format!("details.attempts[data-pending-id=\"{pending_id}\"]");
            if let Ok(Some(el)) = document().query_selector(&selector) {
                el.set_inner_html(&html);
                let _ = el.remove_attribute("hidden");
            }
        });
    }
}
