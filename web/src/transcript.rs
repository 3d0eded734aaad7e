//! A session's transcript: agent messages as text, clarification questions
//! with their outcome as the server recorded it.

use clarify_core::{ClarificationMetadata, Question, Response, Status};
use leptos::prelude::*;
use serde_json::{Value, json};

use clarify_core::MessageKind;
use clarify_core::api::Message;

/// What a settled question shows: the chosen labels and text, or why none.
/// `active` is the session's active bundle: a pending question of any other
/// bundle was superseded and will never be answered.
fn outcome(meta: &ClarificationMetadata, active: Option<&str>) -> (String, &'static str) {
    match meta.status.known() {
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
        Some(Status::Rejected) => ("Skipped".into(), "rejected"),
        Some(Status::Expired) => ("Timed out".into(), "expired"),
        Some(Status::Cancelled) => ("Cancelled".into(), "cancelled"),
        _ if active == Some(meta.pending_id.as_str()) => {
            ("Waiting for your answer".into(), "pending")
        }
        _ => ("Not answered (no longer active)".into(), "inactive"),
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

/// The transcript.
#[component]
pub fn Transcript(
    messages: RwSignal<Vec<Message>>,
    active: Signal<Option<String>>,
) -> impl IntoView {
    view! {
        <ol class="transcript" data-testid="transcript">
            {move || {
                let active = active.get();
                messages
                    .get()
                    .into_iter()
                    .map(|m| {
                        if m.kind == MessageKind::ClarificationRequest.as_str() {
                            let meta = ClarificationMetadata::from_json(&m.metadata);
                            let (text, status) = outcome(&meta, active.as_deref());
                            let prompt = match m.metadata.pointer("/html/prompt").and_then(Value::as_str) {
                                Some(html) => html.to_owned(),
                                None if meta.question.prompt.is_empty() => crate::html::escape(&m.content),
                                None => crate::html::escape(&meta.question.prompt),
                            };
                            view! {
                                <li class="message question" data-testid="transcript-question" data-status=status>
                                    <p class="who">"Agent asked"</p>
                                    <div class="markdown" inner_html=prompt></div>
                                    <p class=format!("outcome {status}") data-testid="transcript-outcome">{text}</p>
                                    {meta
                                        .answered_by
                                        .as_ref()
                                        .filter(|_| status == "answered" || status == "rejected")
                                        .map(|by| {
                                            let verb = if status == "rejected" { "Declined" } else { "Answered" };
                                            let line = by.describe_as(verb, seconds_between(&m.created_at, &m.updated_at));
                                            view! { <p class="provenance" data-testid="transcript-provenance">{line}</p> }
                                        })}
                                </li>
                            }
                                .into_any()
                        } else {
                            view! {
                                <li class="message" data-testid="transcript-message">
                                    <p class="who">{m.kind.clone()}</p>
                                    <p>{m.content}</p>
                                </li>
                            }
                                .into_any()
                        }
                    })
                    .collect_view()
            }}
        </ol>
    }
}
