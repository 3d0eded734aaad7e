//! A session's transcript: agent messages as text, clarification questions
//! with their outcome as the server recorded it.

use clarify_core::{ClarificationMetadata, Question, Response, Status};
use leptos::prelude::*;
use serde_json::{Value, json};

use clarify_core::MessageKind;
use clarify_core::api::Message;

/// What a question shows: the chosen labels and text, or why none. Whether
/// a pending one still waits is the server's rule (D4), read from the
/// session's `active_pending_ids` (issue 46 item 4), never guessed: one
/// that is not active was superseded and will never be answered.
fn outcome(
    meta: &ClarificationMetadata,
    reject_reason: &str,
    active: bool,
) -> (String, &'static str) {
    match meta.status.known() {
        Some(Status::Pending | Status::Responding) | None if active => {
            ("Waiting for an answer".into(), "waiting")
        }
        Some(Status::Answered) => {
            let Some(answer) = &meta.response else {
                return ("Answered".into(), "answered");
            };
            let words = answer_words(
                &meta.question,
                &answer.selected_options,
                &answer.custom_text,
            );
            if words.is_empty() {
                ("Answered (no specific answer)".into(), "answered")
            } else {
                (format!("Answered: {words}"), "answered")
            }
        }
        // What the person said when declining travels with it (issue 45
        // item 4).
        Some(Status::Rejected) if reject_reason.is_empty() => ("Declined".into(), "rejected"),
        Some(Status::Rejected) => (format!("Declined: “{reject_reason}”"), "rejected"),
        Some(Status::Expired) => ("Timed out".into(), "expired"),
        Some(Status::Cancelled) => ("Cancelled".into(), "cancelled"),
        _ => (
            "Not answered (a newer question replaced it)".into(),
            "inactive",
        ),
    }
}

/// An answer to `question` as a person reads it: the chosen labels, then
/// the words in quotes ("PostgreSQL, “only for reads”"); empty for none.
pub fn answer_words(question: &Question, selected: &[String], text: &str) -> String {
    let mut parts: Vec<String> = selected
        .iter()
        .map(|id| question.option_label(id).unwrap_or(id.as_str()).to_owned())
        .collect();
    if !text.is_empty() {
        parts.push(format!("“{text}”"));
    }
    parts.join(", ")
}

/// Seconds from one RFC 3339 instant to another (0 when unreadable).
pub fn seconds_between(from: &str, to: &str) -> i64 {
    let (from, to) = (js_sys::Date::parse(from), js_sys::Date::parse(to));
    if from.is_nan() || to.is_nan() {
        return 0;
    }
    ((to - from) / 1000.0).round() as i64
}

/// Writes the winner's resolution (as the respond body reports it) into the
/// local copies of its questions (W3): a lost submit gets no broadcast, so
/// nothing else would correct them.
pub fn apply_winner(messages: &mut [Message], status: Status, response: &Response) {
    for message in messages.iter_mut() {
        let meta = ClarificationMetadata::from_json(&message.metadata);
        if message.kind != MessageKind::ClarificationRequest.as_str()
            || meta.pending_id != response.pending_id
        {
            continue;
        }
        let answer = response
            .answers
            .iter()
            .find(|a| a.question_id == meta.question_id);
        if let Value::Object(map) = &mut message.metadata {
            map.insert("status".into(), json!(status.as_str()));
            match answer {
                Some(a) => {
                    map.insert("response".into(), json!(a));
                }
                None => {
                    map.remove("response");
                }
            }
        }
    }
}

/// One bundle's messages as one card (issue 29): the context once, then
/// each question's title, prompt and outcome, then who settled it. Static
/// markup, every text escaped or rendered by the server: it is rebuilt
/// whole on every change, and a string costs the wasm far less than a view
/// per line.
fn bundle_card(messages: &[Message], me: Option<&str>, active: &[String]) -> String {
    use crate::html::escape;
    let rendered = |m: &Message, key: &str, text: &str| match m
        .metadata
        .pointer(&format!("/html/{key}"))
        .and_then(Value::as_str)
    {
        Some(html) => html.to_owned(),
        None => escape(text),
    };
    let mut out = String::from(r#"<p class="who">Agent asked</p>"#);
    let mut provenance = None;
    for (i, m) in messages.iter().enumerate() {
        let meta = ClarificationMetadata::from_json(&m.metadata);
        if i == 0 && !meta.context.is_empty() {
            out.push_str(&format!(
                r#"<div class="context markdown">{}</div>"#,
                rendered(m, "context", &meta.context)
            ));
        }
        let (text, status) = outcome(&meta, &m.reject_reason, active.contains(&meta.pending_id));
        let prompt = if meta.question.prompt.is_empty() {
            escape(&m.content)
        } else {
            rendered(m, "prompt", &meta.question.prompt)
        };
        out.push_str(&format!(
            r#"<div class="question" data-testid="transcript-question" data-status="{status}">"#
        ));
        if !meta.question.title.is_empty() {
            out.push_str(&format!(
                r#"<h3 class="question-title">{}</h3>"#,
                rendered(m, "title", &meta.question.title)
            ));
        }
        let answer_it = if status == "waiting" {
            r#" · <a href="/">answer it in the inbox</a>"#
        } else {
            ""
        };
        out.push_str(&format!(
            r#"<div class="markdown">{prompt}</div><p class="outcome {status}" data-testid="transcript-outcome">{}{answer_it}</p></div>"#,
            escape(&text)
        ));
        if provenance.is_none() && (status == "answered" || status == "rejected") {
            provenance = meta.answered_by.clone().map(|mut by| {
                let verb = if status == "rejected" {
                    "Declined"
                } else {
                    "Answered"
                };
                // The person looking is "you" (issue 29: words that fit).
                if me.is_some_and(|me| me == by.user) {
                    "you".clone_into(&mut by.user);
                }
                by.describe_as(verb, seconds_between(&m.created_at, &m.updated_at))
            });
        }
    }
    if let Some(line) = provenance {
        out.push_str(&format!(
            r#"<p class="provenance" data-testid="transcript-provenance">{}</p>"#,
            escape(&line)
        ));
    }
    out
}

/// A transcript's messages, a bundle's questions gathered into one entry.
/// The active bundle is left out: the overlay shows it (no second
/// "waiting" card, issue 29).
fn entries(messages: Vec<Message>, active: Option<&str>) -> Vec<Vec<Message>> {
    let mut out: Vec<Vec<Message>> = Vec::new();
    let mut last = String::new();
    for m in messages {
        if m.kind != MessageKind::ClarificationRequest.as_str() {
            last.clear();
            out.push(vec![m]);
            continue;
        }
        let pid = ClarificationMetadata::from_json(&m.metadata).pending_id;
        if active == Some(pid.as_str()) {
            continue;
        }
        match out.last_mut() {
            Some(group) if pid == last => group.push(m),
            _ => {
                last = pid;
                out.push(vec![m]);
            }
        }
    }
    out
}

/// The transcript.
#[component]
pub fn Transcript(
    messages: RwSignal<Vec<Message>>,
    active: Signal<Option<String>>,
    /// Every active bundle of the session, as the server counts them.
    waiting: Signal<Vec<String>>,
) -> impl IntoView {
    let me = use_context::<crate::Me>().map(|m| m.0);
    view! {
        <ol class="transcript" data-testid="transcript">
            {move || {
                let active = active.get();
                let me = me.and_then(|m| m.get());
                let waiting = waiting.get();
                let mut settled = Vec::new();
                let view = entries(messages.get(), active.as_deref())
                    .into_iter()
                    .map(|group| {
                        if group[0].kind == MessageKind::ClarificationRequest.as_str() {
                            let mut card = bundle_card(&group, me.as_deref(), &waiting);
                            let pid = ClarificationMetadata::from_json(&group[0].metadata).pending_id;
                            // Who else tried, filled in once fetched (issue 46 item 9).
                            if !waiting.contains(&pid) {
                                card.push_str(&format!(
                                    r#"<details class="attempts" data-testid="attempts-log" data-pending-id="{}" hidden></details>"#,
                                    crate::html::escape(&pid)
                                ));
                                settled.push((pid, group[0].created_at.clone()));
                            }
                            view! { <li class="message bundle" data-testid="transcript-bundle" inner_html=card></li> }
                                .into_any()
                        } else {
                            let Some(m) = group.into_iter().next() else {
                                return ().into_any();
                            };
                            view! {
                                <li class="message" data-testid="transcript-message">
                                    <p class="who">{m.kind}</p>
                                    <p>{m.content}</p>
                                </li>
                            }
                                .into_any()
                        }
                    })
                    .collect_view();
                crate::attempts::fill(settled);
                view
            }}
        </ol>
    }
}
