//! One inbox row: what a waiting bundle (or a group of alike ones) is
//! about, its overlay when opened, a number key to answer it in place.

use std::collections::{HashMap, HashSet};

use clarify_core::api::BundleView;
use clarify_core::{AnswerInput, PendingBundle, Submission};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, SubmitOutcome};
use crate::expiry::Countdown;
use crate::overlay::{Drafts, Overlay};
use crate::waiting::{Waiting, age_text};

/// One waiting bundle: what it is about, and its overlay when opened.
#[component]
pub(super) fn Row(
    bundle: PendingBundle,
    /// Later bundles asking the same, answered with this one.
    alike: Vec<String>,
    split: RwSignal<HashSet<String>>,
    open: RwSignal<Option<String>>,
    titles: RwSignal<HashMap<String, String>>,
    drafts: Drafts,
    on_done: Callback<SubmitOutcome>,
) -> impl IntoView {
    let waiting = Waiting::get();
    let id = StoredValue::new(bundle.pending_id.clone());
    let many = alike.len() + 1;
    let assignee = bundle.assignee.clone();
    let key = bundle.similar_key.clone();
    let others = StoredValue::new(alike);
    let task_id = bundle.task_id.clone();
    let is_open = move || open.with(|o| id.with_value(|id| o.as_ref() == Some(id)));
    let age = move || {
        waiting.bundles.with(|list| {
            id.with_value(|id| list.iter().find(|b| &b.pending_id == id))
                .map(|b| age_text(b.age_seconds))
                .unwrap_or_default()
        })
    };
    let title = move || {
        titles.with(|t| {
            t.get(&task_id)
                .filter(|t| !t.is_empty())
                .cloned()
                .unwrap_or_else(|| "A task".to_owned())
        })
    };
    let first = bundle
        .questions
        .first()
        .map(|q| {
            crate::html::of(
                &bundle.html,
                &format!("{}.prompt.line", q.question_id),
                &q.prompt,
            )
        })
        .unwrap_or_default();
    let count = match bundle.questions.len() {
        1 => "1 question".to_owned(),
        n => format!("{n} questions"),
    };
    let expires_at = bundle.expires_at.clone();
    // A one-question row answers in place by number key (issue 29 item 4):
    // key n picks its n-th option, as the overlay's number keys do.
    let single = (bundle.questions.len() == 1).then(|| bundle.questions[0].clone());
    let single = StoredValue::new(single);
    let view_of = RwSignal::new(None::<BundleView>);
    let show = move || {
        spawn_local(async move {
            match api::bundle(&id.get_value()).await {
                Ok(b) if b.active => {
                    view_of.try_set(Some(b));
                }
                _ => {
                    open.set(None);
                    waiting.load();
                }
            }
        });
    };
    let answering = RwSignal::new(false);
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let Some(n) = ev.key().parse::<usize>().ok().filter(|n| *n >= 1) else {
            return;
        };
        if is_open() || answering.get_untracked() || ev.ctrl_key() || ev.meta_key() || ev.alt_key()
        {
            return;
        }
        let Some(submission) = single.with_value(|q| {
            let q = q.as_ref()?;
            let option = q.options.get(n - 1)?;
            Some(Submission::answers(vec![AnswerInput {
                question_id: q.question_id.clone(),
                selected_options: vec![option.option_id.clone()],
                custom_text: String::new(),
            }]))
        }) else {
            return;
        };
        ev.prevent_default();
        open.set(Some(id.get_value()));
        // Something already chosen or typed for it stays the person's to
        // finish (issue 29: nothing typed is lost): the overlay opens with
        // it, where an answer in place would send the option alone.
        if drafts
            .with_untracked(|m| id.with_value(|id| m.get(id).is_some_and(|d| d.answered() > 0)))
        {
            show();
            return;
        }
        answering.set(true);
        spawn_local(async move {
            let others = others.get_value();
            match api::respond_all(&id.get_value(), &others, &submission).await {
                Ok(outcome) => on_done.run(outcome),
                Err(e) => {
                    open.set(None);
                    answering.set(false);
                    waiting
                        .error
                        .set(Some(format!("Your answer was not sent. {}", e.message())));
                }
            }
        });
    };
    // A row re-made while open (reassigned into "For you", or its group
    // changed) opens again where it now is.
    if is_open() {
        show();
    }
    let toggle = move |_| {
        if is_open() {
            open.set(None);
            return;
        }
        open.set(Some(id.get_value()));
        show();
    };
    view! {
        <li class="inbox-row" data-testid="inbox-row" data-pending-id=bundle.pending_id>
            <button
                type="button"
                class="row"
                aria-expanded=move || if is_open() { "true" } else { "false" }
                aria-busy=move || answering.get().then_some("true")
                on:click=toggle
                on:keydown=on_key
            >
                <span class="row-task">
                    {title}
                    {(!assignee.is_empty())
                        .then(|| {
                            view! {
                                <span class="pending assignee" data-testid="inbox-assignee">
                                    {format!("for {assignee}")}
                                </span>
                            }
                        })}
                </span>
                <span class="row-age">{age}</span>
                <span class="row-question" inner_html=first></span>
                <span class="row-count">
                    {(many > 1)
                        .then(|| {
                            view! {
                                <span class="pending" data-testid="inbox-alike">
                                    {format!("{many} agents ask this")}
                                </span>
                                " · "
                            }
                        })}
                    {count}
                    {(!expires_at.is_empty())
                        .then(|| view! { " · " <Countdown deadline=crate::expiry::deadline(&expires_at) /> })}
                </span>
            </button>
            {(many > 1)
                .then(|| {
                    view! {
                        <button
                            type="button"
                            class="secondary split"
                            data-testid="inbox-split"
                            on:click=move |_| {
                                split.update(|s| {
                                    s.insert(key.clone());
                                });
                            }
                        >
                            "Answer each on its own"
                        </button>
                    }
                })}
            {move || {
                is_open()
                    .then(|| view_of.get())
                    .flatten()
                    .map(|b| view! { <Overlay bundle=b alike=others.get_value() drafts=drafts on_done=on_done /> })
            }}
        </li>
    }
}
