//! Who else tried to answer a settled bundle, and when (issue 46 item 9):
//! the API's attempts log, under the bundle's card in the transcript.

use clarify_core::{Attempt, Attempts};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::transcript::seconds_between;

/// One attempt as a person reads it: "Tried by bob in Slack, 2 min after
/// it was asked: too late".
fn line(attempt: &Attempt, asked_at: &str) -> String {
    let (verb, after) = match attempt.outcome.as_str() {
        "won" => ("Answered", ""),
        "lost" => ("Tried", ": too late, someone had answered"),
        _ => ("Tried", ": it had closed"),
    };
    let when = seconds_between(asked_at, &attempt.at);
    format!("{}{after}", attempt.by.describe_as(verb, when))
}

/// The log of `pending_id`, shown once it holds more than the winner.
#[component]
pub fn AttemptsLog(pending_id: String, asked_at: String) -> impl IntoView {
    let log = RwSignal::new(None::<Attempts>);
    spawn_local(async move {
        if let Ok(found) = crate::api::attempts(&pending_id).await {
            log.try_set(Some(found));
        }
    });
    move || {
        log.with(|l| {
            let list = &l.as_ref()?.attempts;
            if list.len() < 2 {
                return None;
            }
            let items = list
                .iter()
                .map(|a| view! { <li>{line(a, &asked_at)}</li> })
                .collect_view();
            Some(view! {
                <details class="attempts" data-testid="attempts-log">
                    <summary>{format!("{} tried to answer", list.len())}</summary>
                    <ul>{items}</ul>
                </details>
            })
        })
    }
}
