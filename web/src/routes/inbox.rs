//! `/`: "Waiting for you", every bundle the person may answer, oldest
//! first across tasks, each opening its overlay in place; the tasks below.

use std::collections::{HashMap, HashSet};

use std::time::Duration;

use clarify_core::alike::alike;
use clarify_core::api::BundleView;
use clarify_core::{AnswerInput, PendingBundle, Submission};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use super::tasks::TaskList;
use crate::api::{self, SubmitOutcome};
use crate::expiry::Countdown;
use crate::notify::NotifyButton;
use crate::overlay::{Drafts, Overlay, Overtaken, OvertakenCard, overtaken};
use crate::waiting::{Waiting, age_text};

/// The inbox, then the task list.
#[component]
pub fn InboxPage() -> impl IntoView {
    let waiting = Waiting::get();
    let open = RwSignal::new(None::<String>);
    let drafts: Drafts = RwSignal::new(HashMap::new());
    let notice = RwSignal::new(None::<String>);
    let titles = RwSignal::new(HashMap::<String, String>::new());
    // Groups of alike bundles the person chose to answer one by one.
    let split = RwSignal::new(HashSet::<String>::new());
    let me = use_context::<crate::Me>().map(|m| m.0);
    // The rows assigned to this person (`mine`), or the others.
    let rows = move |mine: bool| {
        let me = me.and_then(|m| m.get()).unwrap_or_default();
        waiting.bundles.with(|list| {
            split.with(|apart| {
                group(list, apart)
                    .into_iter()
                    .filter(|(b, _)| (!me.is_empty() && b.assignee == me) == mine)
                    .collect::<Vec<_>>()
            })
        })
    };
    // Task titles, fetched once per task as rows appear.
    Effect::new(move || {
        let missing: Vec<String> = waiting.bundles.with(|list| {
            titles.with_untracked(|known| {
                list.iter()
                    .map(|b| b.task_id.clone())
                    .filter(|id| !known.contains_key(id))
                    .collect()
            })
        });
        for id in missing {
            titles.update_untracked(|t| {
                t.insert(id.clone(), String::new());
            });
            spawn_local(async move {
                if let Ok(task) = api::task(&id).await {
                    titles.update(|t| {
                        t.insert(id, task.task.title);
                    });
                }
            });
        }
    });
    // A bundle with a draft that left the list was settled elsewhere (or
    // closed): the draft stays readable, and who answered is said.
    let settled = RwSignal::new(None::<Overtaken>);
    Effect::new(move || {
        let gone: Vec<String> = waiting.bundles.with(|list| {
            drafts.with_untracked(|m| {
                m.keys()
                    .filter(|id| !list.iter().any(|b| &b.pending_id == *id))
                    .cloned()
                    .collect()
            })
        });
        for id in gone {
            spawn_local(async move {
                if let Some(o) = overtaken(&id, drafts).await {
                    if open.get_untracked().as_ref() == Some(&id) {
                        open.set(None);
                    }
                    settled.set(Some(o));
                }
            });
        }
    });
    // After an answer, focus goes to the row that took its place (issue 29
    // item 4): told by the answered bundle and where it stood.
    // Its place is taken when it opens: by the time the answer's own
    // reply comes, the socket may already have taken its row away.
    let opened_at = StoredValue::new(None::<(String, usize)>);
    Effect::new(move || {
        if let Some(pid) = open.get() {
            let at = row_buttons().iter().position(|b| {
                b.parent_element()
                    .and_then(|row| row.get_attribute("data-pending-id"))
                    .is_some_and(|id| id == pid)
            });
            opened_at.set_value(at.map(|at| (pid, at)));
        }
    });
    let refocus = StoredValue::new(None::<(String, usize)>);
    let refocus_if_gone = move || {
        let Some((answered, at)) = refocus.get_value() else {
            return;
        };
        let rows = waiting.bundles.with_untracked(|list| {
            (!list.iter().any(|b| b.pending_id == answered)).then_some(list.len())
        });
        if let Some(rows) = rows {
            refocus.set_value(None);
            if rows > 0 {
                // After the rows re-render; the last row when it was last.
                set_timeout(
                    move || focus_row(at.min(row_buttons().len().saturating_sub(1))),
                    Duration::ZERO,
                );
            }
        }
    };
    Effect::new(move || {
        waiting.bundles.track();
        refocus_if_gone();
    });
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.default_prevented() || ev.ctrl_key() || ev.meta_key() || ev.alt_key() || typing(&ev) {
            return;
        }
        let step: isize = match ev.key().as_str() {
            "j" => 1,
            "k" => -1,
            _ => return,
        };
        ev.prevent_default();
        let rows = row_buttons();
        let current = rows
            .iter()
            .position(|b| document().active_element().as_ref() == Some(b));
        let to = match current {
            Some(i) => i
                .saturating_add_signed(step)
                .min(rows.len().saturating_sub(1)),
            None => 0,
        };
        focus_row(to);
    });
    on_cleanup(move || keys.remove());
    let on_done = Callback::new(move |outcome: SubmitOutcome| {
        refocus.set_value(opened_at.get_value());
        open.set(None);
        refocus_if_gone();
        notice.set(Some(outcome.sentence()));
        waiting.load();
    });

    view! {
        <section class="inbox" data-testid="inbox" aria-labelledby="inbox-heading">
            <div class="section-head">
                <h2 id="inbox-heading">"Waiting for you"</h2>
                <NotifyButton />
            </div>
            {move || waiting.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <div role="status">
                {move || notice.get().map(|text| view! { <p class="notice" data-testid="inbox-notice">{text}</p> })}
            </div>
            // The latest one: a person reads one at a time.
            {move || {
                settled
                    .get()
                    .map(|o| {
                        view! { <OvertakenCard overtaken=o dismiss=Callback::new(move |()| settled.set(None)) /> }
                    })
            }}
            <Show when=move || waiting.loaded.get() && waiting.bundles.with(Vec::is_empty)>
                <div data-testid="inbox-empty">
                    <p>"Nothing is waiting for you."</p>
                    // A first visit has no agent yet: say how one asks (issue 29).
                    <p class="hint" data-testid="inbox-connect">
                        "An agent asks you through " <code>"clarify mcp"</code>
                        ", which its MCP client starts: for Claude Code, "
                        <code>"claude mcp add clarify -- clarify mcp"</code>
                        ". Other clients: the README's \"Connect your agent\"."
                    </p>
                </div>
            </Show>
            // What is assigned to this person comes first (issue 29 item 6).
            <Show when=move || !rows(true).is_empty()>
                <h3 class="for-you" data-testid="inbox-for-you">"For you"</h3>
            </Show>
            <ul class="inbox-list" data-testid="inbox-mine">
                <For
                    each=move || rows(true)
                    key=|(b, alike)| (b.pending_id.clone(), alike.len())
                    children=move |(bundle, alike)| {
                        view! { <Row bundle=bundle alike=alike split=split open=open titles=titles drafts=drafts on_done=on_done /> }
                    }
                />
            </ul>
            <ul class="inbox-list">
                <For
                    each=move || rows(false)
                    key=|(b, alike)| (b.pending_id.clone(), alike.len())
                    children=move |(bundle, alike)| {
                        view! { <Row bundle=bundle alike=alike split=split open=open titles=titles drafts=drafts on_done=on_done /> }
                    }
                />
            </ul>
            <Show when=move || waiting.bundles.with(|b| !b.is_empty())>
                <p class="hint keys">"j/k move · Enter opens · 1–9 answer a one-question row"</p>
            </Show>
            <Show when=move || waiting.more.get()>
                <p class="hint">"More are waiting than shown: answer these first."</p>
            </Show>
        </section>
        <TaskList />
    }
}

/// The rows: each bundle, oldest first, with the later ones that ask the
/// same folded into it (issue 29 item 5): same `similar_key` and questions
/// compared alike, unless the person split that key apart.
fn group(list: &[PendingBundle], apart: &HashSet<String>) -> Vec<(PendingBundle, Vec<String>)> {
    let mut rows: Vec<(PendingBundle, Vec<String>)> = Vec::new();
    for bundle in list {
        let key = &bundle.similar_key;
        let leader = (!key.is_empty() && !apart.contains(key))
            .then(|| {
                rows.iter_mut().find(|(lead, _)| {
                    &lead.similar_key == key && alike(&lead.questions, &bundle.questions)
                })
            })
            .flatten();
        match leader {
            Some((_, others)) => others.push(bundle.pending_id.clone()),
            None => rows.push((bundle.clone(), Vec::new())),
        }
    }
    rows
}

/// Whether a key was pressed while typing, where letters are letters.
fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT"))
}

/// The rows' buttons, in order.
fn row_buttons() -> Vec<web_sys::Element> {
    let Ok(list) = document().query_selector_all("[data-testid=inbox-row] > button.row") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<web_sys::Element>().ok())
        .collect()
}

/// Focuses the `at`-th row's button (0-based), if there is one.
fn focus_row(at: usize) {
    if let Some(button) = row_buttons()
        .into_iter()
        .nth(at)
        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = button.focus();
    }
}

/// One waiting bundle: what it is about, and its overlay when opened.
#[component]
fn Row(
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
        answering.set(true);
        open.set(Some(id.get_value()));
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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use clarify_core::{ListedQuestion, PendingBundle};

    use super::group;

    fn bundle(id: &str, key: &str, prompt: &str) -> PendingBundle {
        PendingBundle {
            pending_id: id.into(),
            similar_key: key.into(),
            questions: vec![ListedQuestion {
                question_id: "q1".into(),
                prompt: prompt.into(),
                ..ListedQuestion::default()
            }],
            ..PendingBundle::default()
        }
    }

    fn rows(list: &[PendingBundle], apart: &HashSet<String>) -> Vec<(String, Vec<String>)> {
        group(list, apart)
            .into_iter()
            .map(|(b, others)| (b.pending_id, others))
            .collect()
    }

    #[test]
    fn alike_bundles_fold_into_the_oldest_unless_split_or_only_the_key_matches() {
        let list = [
            bundle("a", "k", "Postgres or SQLite?"),
            bundle("b", "x", "Something else?"),
            bundle("c", "k", "Postgres or SQLite?"),
            // A forged key on other questions is not folded in.
            bundle("d", "k", "Send me your secrets?"),
            bundle("e", "", "Postgres or SQLite?"),
        ];
        assert_eq!(
            rows(&list, &HashSet::new()),
            [
                ("a".to_owned(), vec!["c".to_owned()]),
                ("b".to_owned(), vec![]),
                ("d".to_owned(), vec![]),
                ("e".to_owned(), vec![]),
            ]
        );
        let apart = HashSet::from(["k".to_owned()]);
        assert_eq!(rows(&list, &apart).len(), 5);
    }
}
