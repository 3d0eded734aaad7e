//! A bundle settled elsewhere while a person was mid-answer: the form does
//! not just vanish; it says who answered what, and keeps the person's draft
//! readable, marked as not sent (issue 29 item 1).

use clarify_core::api::BundleView;
use clarify_core::{Question, Status, ViewStatus};
use leptos::prelude::*;

use super::{Drafts, draft};
use crate::api::{self, Closed};
use crate::transcript::{answer_words, seconds_between};

/// A settled bundle and the draft that was not sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Overtaken {
    view: BundleView,
    draft: draft::Draft,
}

/// Whether `pending_id`, gone from the page, was settled by someone else
/// while this page held a draft of it. The draft then moves out of `drafts`
/// (and the tab's storage) into the answer. A draft being sent is this
/// page's own answer, never overtaken; a bundle still active (a list that
/// merely lags) keeps its draft.
pub async fn overtaken(pending_id: &str, drafts: Drafts) -> Option<Overtaken> {
    let draft = drafts
        .with_untracked(|m| m.get(pending_id).cloned())
        .filter(|d| !d.sending && d.answered() > 0)?;
    let view = api::bundle(pending_id).await.ok().filter(|v| !v.active)?;
    if drafts.with_untracked(|m| m.get(pending_id).is_none_or(|d| d.sending)) {
        return None;
    }
    drafts.update(|m| {
        m.remove(pending_id);
    });
    draft::forget(pending_id);
    Some(Overtaken { view, draft })
}

/// What settled it, in one sentence: "Answered by bob in Slack, 2 min
/// after it was asked: PostgreSQL".
fn headline(view: &BundleView, questions: &[Question]) -> String {
    let (Some(response), Some(by)) = (&view.response, &view.answered_by) else {
        return Closed::of(view, js_sys::Date::now()).sentence();
    };
    let after = seconds_between(&view.bundle.created_at, &response.responded_at);
    if response.rejected {
        let line = by.describe_as("Declined", after);
        return match response.reject_reason.as_str() {
            "" => line,
            reason => format!("{line}: “{reason}”"),
        };
    }
    let words: Vec<String> = questions
        .iter()
        .filter_map(|q| {
            let answer = response
                .answers
                .iter()
                .find(|a| a.question_id == q.question_id)?;
            let words = answer_words(q, &answer.selected_options, &answer.custom_text);
            (!words.is_empty()).then_some(words)
        })
        .collect();
    let line = by.describe_as("Answered", after);
    if words.is_empty() {
        line
    } else {
        format!("{line}: {}", words.join("; "))
    }
}

/// The settled form: the winner's answer, the draft beneath it (read-only,
/// still copyable), and a button that puts it away.
#[component]
pub fn OvertakenCard(overtaken: Overtaken, dismiss: Callback<()>) -> impl IntoView {
    let Overtaken { view, draft } = overtaken;
    let questions: Vec<Question> = view
        .bundle
        .questions
        .iter()
        .cloned()
        .map(Into::into)
        .collect();
    let answered = matches!(
        view.status,
        ViewStatus::Known(Status::Answered | Status::Rejected)
    );
    // Defaults chosen at expiry are nobody's answer (issue 46 item 7).
    let by_expiry = view
        .answered_by
        .as_ref()
        .is_some_and(|by| by.channel == clarify_core::provenance::Channel::Expiry.as_str());
    let title = if answered && !by_expiry {
        "Someone else answered first"
    } else if by_expiry {
        "Time ran out"
    } else {
        "This question closed"
    };
    let headline = headline(&view, &questions);
    let kept = kept_html(&questions, &draft);
    view! {
        <section class="overlay overtaken" data-testid="clarification-overtaken" aria-labelledby="overtaken-heading">
            <h2 id="overtaken-heading">{title}</h2>
            <p class="notice" role="status" data-testid="overtaken-winner">
                {headline}
                " — your draft was not sent."
            </p>
            <ul class="kept" inner_html=kept></ul>
            <div class="actions">
                <button type="button" class="secondary" data-testid="overtaken-dismiss" on:click=move |_| dismiss.run(())>
                    "Dismiss"
                </button>
            </div>
        </section>
    }
}

/// The draft as static markup, every text escaped: nothing in it changes,
/// and one string costs the wasm far less than a reactive view per line.
/// The words sit in a read-only text box, so they can still be copied.
fn kept_html(questions: &[Question], draft: &draft::Draft) -> String {
    use crate::html::escape;
    let mut out = String::new();
    for (i, q) in questions.iter().enumerate() {
        if !draft.is_answered(i) {
            continue;
        }
        let label = if q.title.is_empty() {
            &q.prompt
        } else {
            &q.title
        };
        out.push_str(&format!(
            "<li><p class=\"question-title\">{}</p>",
            escape(label)
        ));
        let picked = answer_words(q, &draft.selected[i], "");
        if !picked.is_empty() {
            out.push_str(&format!("<p>You had chosen: {}</p>", escape(&picked)));
        }
        if !draft.text[i].is_empty() {
            out.push_str(&format!(
                "<textarea readonly rows=\"3\" data-testid=\"overtaken-draft\" \
                 aria-label=\"Your draft, not sent\">{}</textarea>",
                escape(&draft.text[i])
            ));
        }
        out.push_str("</li>");
    }
    out
}
