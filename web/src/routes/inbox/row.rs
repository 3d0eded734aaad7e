//! One inbox row: one line saying what a waiting bundle (or a group of
//! alike ones) asks, its overlay when opened. A number key on a closed row
//! opens it; nothing is answered unseen (issue 46 item 2).

use std::collections::{HashMap, HashSet};

use clarify_core::api::BundleView;
use clarify_core::{PendingBundle, Submission};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, SubmitOutcome};
use crate::expiry::Countdown;
use crate::overlay::{Drafts, Overlay};
use crate::waiting::{Waiting, age_text};

/// What the row says: the first question's title, else the first line of
/// its prompt (issue 46 item 1); the whole prompt is in the opened row.
fn line(bundle: &PendingBundle) -> String {
    bundle
        .questions
        .first()
        .map(|q| {
            // The server sends both rendered (REST views always carry them).
            let (key, text) = if q.title.is_empty() {
                (format!("{}.prompt.line", q.question_id), &q.prompt)
            } else {
                (format!("{}.title", q.question_id), &q.title)
            };
            crate::html::of(&bundle.html, &key, text)
        })
        .unwrap_or_default()
}

/// One waiting bundle: what it is about, and its overlay when opened.
#[component]
pub(super) fn Row(
    bundle: PendingBundle,
    /// Later bundles asking the same, answered with this one.
    alike: Vec<String>,
    /// First of its task: how many rows the task has, said in the task's
    /// heading above this row (issue 46 item 8).
    head: Option<usize>,
    split: RwSignal<HashSet<String>>,
    open: RwSignal<Option<String>>,
    titles: RwSignal<HashMap<String, String>>,
    drafts: Drafts,
    on_done: Callback<SubmitOutcome>,
    /// Holds an answer for Undo: the bundle, its alike ones, the answer.
    hold: Callback<(String, Vec<String>, Submission)>,
) -> impl IntoView {
    let waiting = Waiting::get();
    let id = StoredValue::new(bundle.pending_id.clone());
    let many = alike.len() + 1;
    let assignee = bundle.assignee.clone();
    let key = bundle.similar_key.clone();
    let others = StoredValue::new(alike);
    let is_open = move || open.with(|o| id.with_value(|id| o.as_ref() == Some(id)));
    let age = move || {
        waiting.bundles.with(|list| {
            id.with_value(|id| list.iter().find(|b| &b.pending_id == id))
                .map(|b| age_text(b.age_seconds))
                .unwrap_or_default()
        })
    };
    // Before the answer, which agents one answer reaches (issue 46 item 7).
    let agents = move || {
        let ids: Vec<String> = std::iter::once(id.get_value())
            .chain(others.get_value())
            .collect();
        let names: Vec<String> = waiting.bundles.with(|list| {
            titles.with(|t| {
                ids.iter()
                    .filter_map(|pid| list.iter().find(|b| &b.pending_id == pid))
                    .map(|b| t.get(&b.task_id).cloned().unwrap_or_default())
                    .collect()
            })
        });
        format!("Answers {many} agents: {}", names.join(", "))
    };
    let first = line(&bundle);
    let task_id = StoredValue::new(bundle.task_id.clone());
    let heading = head.map(|n| {
        let title = move || {
            titles.with(|t| {
                task_id
                    .with_value(|id| t.get(id).cloned())
                    .unwrap_or_default()
            })
        };
        view! {
            <h3 class="task-title" data-testid="inbox-task">
                {title}
                " "
                <span class="count" data-testid="inbox-task-count">{format!("({n})")}</span>
            </h3>
        }
    });
    let count = match bundle.questions.len() {
        1 => "1 question".to_owned(),
        n => format!("{n} questions"),
    };
    let expires_at = bundle.expires_at.clone();
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
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let digit = ev.key().parse::<usize>().is_ok_and(|n| n >= 1);
        if !digit || is_open() || ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        ev.prevent_default();
        open.set(Some(id.get_value()));
        show();
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
    let hold =
        Callback::new(move |s: Submission| hold.run((id.get_value(), others.get_value(), s)));
    let close = Callback::new(move |()| {
        open.set(None);
        super::keys::focus_pending(&id.get_value());
    });
    view! {
        <li class="inbox-row" class:first=head.is_some() data-testid="inbox-row" data-pending-id=bundle.pending_id>
            {heading}
            <button
                type="button"
                class="row"
                aria-expanded=move || if is_open() { "true" } else { "false" }
                on:click=toggle
                on:keydown=on_key
            >
                <span class="row-question" data-testid="inbox-row-line" inner_html=first></span>
                <span class="row-age">{age}</span>
                <span class="row-count">
                    {(!assignee.is_empty())
                        .then(|| {
                            view! {
                                <span class="pending assignee" data-testid="inbox-assignee">
                                    {format!("for {assignee}")}
                                </span>
                                " "
                            }
                        })}
                    {(many > 1)
                        .then(|| {
                            view! {
                                <span class="pending" data-testid="inbox-alike">
                                    {agents}
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
                    .map(|b| {
                        view! {
                            <Overlay
                                bundle=b
                                alike=others.get_value()
                                drafts=drafts
                                on_done=on_done
                                hold=hold
                                on_escape=close
                            />
                        }
                    })
            }}
        </li>
    }
}
