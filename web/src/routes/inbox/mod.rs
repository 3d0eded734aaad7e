//! `/`: "Waiting for you", every bundle the person may answer, oldest
//! first across tasks, each opening its overlay in place; the tasks below.

mod group;
mod keys;
mod row;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::tasks::TaskList;
use crate::api::{self, SubmitOutcome};
use crate::notify::NotifyButton;
use crate::overlay::{Drafts, Overtaken, OvertakenCard, overtaken};
use crate::waiting::Waiting;
use group::group;
use keys::{focus_row, row_buttons, typing};
use row::Row;

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

    // The rows assigned to this person, or the others, as a list.
    let list = move |mine: bool| {
        view! {
            <ul class="inbox-list" data-testid=mine.then_some("inbox-mine")>
                <For
                    each=move || rows(mine)
                    key=|(b, alike)| (b.pending_id.clone(), alike.len(), b.assignee.clone())
                    children=move |(bundle, alike)| {
                        view! { <Row bundle=bundle alike=alike split=split open=open titles=titles drafts=drafts on_done=on_done /> }
                    }
                />
            </ul>
        }
    };
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
            {list(true)}
            {list(false)}
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
