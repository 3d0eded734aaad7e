//! An answer given in the inbox is held a few seconds before it is sent,
//! so Undo can take it back (issue 46 item 2). Exactly once holds because
//! nothing leaves the page until the window ends: an answer that was sent
//! is never "undone" behind the agent's back. A page that goes away sends
//! what it holds at once (a keep-alive request), so nothing is lost.

use std::time::Duration;

use clarify_core::{PendingBundle, Question, Submission};
use leptos::prelude::*;

use crate::transcript::answer_words;

/// How long an answer waits for Undo: long enough to see it, short enough
/// that the agent hardly notices (a mail client's "undo send" default).
pub(super) const HOLD: Duration = Duration::from_secs(5);

/// An answer given and not sent yet.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Held {
    pub pending_id: String,
    /// Alike bundles answered with it.
    pub alike: Vec<String>,
    pub submission: Submission,
    /// What was answered, as the toast names it: safe HTML (the question
    /// as the server rendered its line, the answer escaped).
    pub what: String,
}

/// The one held answer, and its timer. A second answer sends the first at
/// once: one Undo at a time is what a person can follow.
#[derive(Clone, Copy)]
pub(super) struct Outbox {
    pub held: RwSignal<Option<Held>>,
    timer: StoredValue<Option<TimeoutHandle>>,
}

impl Outbox {
    pub fn new() -> Self {
        Self {
            held: RwSignal::new(None),
            timer: StoredValue::new(None),
        }
    }

    /// Holds `answer`; `send` runs when the window ends (or sooner).
    pub fn hold(self, answer: Held, send: Callback<Held>) {
        self.flush(send);
        self.held.set(Some(answer));
        let handle = set_timeout_with_handle(move || self.flush(send), HOLD).ok();
        self.timer.set_value(handle);
    }

    /// Sends what is held now.
    pub fn flush(self, send: Callback<Held>) {
        if let Some(held) = self.take() {
            send.run(held);
        }
    }

    /// Takes back what is held, unsent.
    pub fn take(self) -> Option<Held> {
        if let Some(timer) = self.timer.try_update_value(Option::take).flatten() {
            timer.clear();
        }
        self.held.try_update(Option::take).flatten()
    }

    /// The id held, if any.
    pub fn holds(self) -> Option<String> {
        self.held.with(|h| h.as_ref().map(|h| h.pending_id.clone()))
    }
}

/// "“Which database?”: PostgreSQL" (or the decline and its reason), naming
/// the first question, and how many more were answered with it.
pub(super) fn describe(bundle: &PendingBundle, submission: &Submission) -> String {
    let Some(first) = bundle.questions.first() else {
        return String::new();
    };
    let name = if first.title.is_empty() {
        crate::html::of(
            &bundle.html,
            &format!("{}.prompt.line", first.question_id),
            &first.prompt,
        )
    } else {
        crate::html::escape(&first.title)
    };
    let more = match bundle.questions.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    if submission.rejected {
        return match submission.reject_reason.trim() {
            "" => format!("Declined “{name}”{more}."),
            reason => format!(
                "Declined “{name}”{more}: “{}”.",
                crate::html::escape(reason)
            ),
        };
    }
    let question: Question = first.clone().into();
    let words = submission
        .answers
        .iter()
        .find(|a| a.question_id == question.question_id)
        .map(|a| answer_words(&question, &a.selected_options, &a.custom_text))
        .unwrap_or_default();
    format!("“{name}”{more}: {}.", crate::html::escape(&words))
}
