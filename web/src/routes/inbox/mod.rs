//! `/`: "Waiting for you", every bundle the person may answer, grouped by
//! task (issue 46 item 8), each opening its overlay in place; the tasks
//! below. Messages come in a toast where the person looks (item 3).

mod group;
mod held;
mod keys;
mod row;
mod toast;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use clarify_core::{PendingBundle, Submission};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::tasks::TaskList;
use crate::api::{self, SubmitOutcome};
use crate::notify::NotifyButton;
use crate::overlay::{Drafts, Overtaken, forget_draft, overtaken};
use crate::waiting::Waiting;
use group::{by_task, group, matches};
use held::{Held, Outbox};
use keys::{focus_row, row_buttons, typing};
use row::Row;

/// From this many waiting, a filter is offered (issue 46 item 8).
const FILTER_FROM: usize = 10;

/// A row: a bundle, its alike ones, and, first in its task, how many rows
/// the task has (its heading goes above it).
type FlatRow = (PendingBundle, Vec<String>, Option<usize>);

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
    let filter = RwSignal::new(String::new());
    let outbox = Outbox::new();
    let me = use_context::<crate::Me>().map(|m| m.0);
    // The rows assigned to this person (`mine`), or the others, by task;
    // a held answer's row is out of sight until it is undone.
    let tasks = move |mine: bool| -> Vec<FlatRow> {
        let me = me.and_then(|m| m.get()).unwrap_or_default();
        let held = outbox.holds();
        // The filter applies only while it is shown.
        let filter = if waiting.bundles.with(Vec::len) >= FILTER_FROM {
            filter.get().to_ascii_lowercase()
        } else {
            String::new()
        };
        let rows = waiting.bundles.with(|list| {
            split.with(|apart| {
                group(list, apart)
                    .into_iter()
                    .filter(|(b, _)| (!me.is_empty() && b.assignee == me) == mine)
                    .filter(|(b, _)| held.as_ref() != Some(&b.pending_id))
                    .filter(|(b, _)| {
                        titles.with(|t| {
                            matches(b, t.get(&b.task_id).map_or("", String::as_str), &filter)
                        })
                    })
                    .collect::<Vec<_>>()
            })
        });
        // One flat list (one keyed `For`, as before the grouping: the wasm
        // pays for each kind of list), a heading above each task's first.
        by_task(rows)
            .into_iter()
            .flat_map(|(_, rows)| {
                let n = rows.len();
                rows.into_iter()
                    .enumerate()
                    .map(move |(i, (b, alike))| (b, alike, (i == 0).then_some(n)))
            })
            .collect()
    };
    // Task titles, fetched once per task as rows appear.
    Effect::new(move || {
        // Each task once, however many of its rows wait (the trace
        // saw 14 requests for 6 tasks).
        let missing: HashSet<String> = waiting.bundles.with(|list| {
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
                        t.insert(id, task.title);
                    });
                }
            });
        }
    });
    // A bundle with a draft that left the list was settled elsewhere (or
    // closed): the draft stays readable, and who answered is said; an
    // answer held for it is not sent.
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
                    if outbox.holds().as_ref() == Some(&id) {
                        outbox.take();
                    }
                    settled.set(Some(o));
                }
            });
        }
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
        open.set(None);
        notice.set(Some(crate::html::escape(&outcome.sentence())));
        waiting.load();
    });
    // The held answer goes: the draft is marked as being sent, so the row
    // leaving the list is not taken for someone else's answer.
    let send = Callback::new(move |h: Held| {
        drafts.update(|m| {
            if let Some(d) = m.get_mut(&h.pending_id) {
                d.sending = true;
            }
        });
        spawn_local(async move {
            match api::respond_all(&h.pending_id, &h.alike, &h.submission).await {
                Ok(outcome) => {
                    forget_draft(&h.pending_id);
                    drafts.update(|m| {
                        m.remove(&h.pending_id);
                    });
                    // The sentence is plain words; `what` is safe HTML.
                    notice.set(Some(format!(
                        "{} {}",
                        crate::html::escape(&outcome.sentence()),
                        h.what
                    )));
                    waiting.load();
                }
                Err(e) => {
                    drafts.update(|m| {
                        if let Some(d) = m.get_mut(&h.pending_id) {
                            d.sending = false;
                        }
                    });
                    waiting
                        .error
                        .set(Some(format!("Your answer was not sent. {}", e.message())));
                    open.set(Some(h.pending_id));
                }
            }
        });
    });
    let hold = Callback::new(
        move |(pending_id, alike, submission): (String, Vec<String>, Submission)| {
            let what = waiting.bundles.with_untracked(|list| {
                list.iter()
                    .find(|b| b.pending_id == pending_id)
                    .map(|b| held::describe(b, &submission))
                    .unwrap_or_default()
            });
            // Focus stays where the row was: on the row that takes its place.
            let at = row_buttons().iter().position(|b| {
                b.parent_element()
                    .and_then(|row| row.get_attribute("data-pending-id"))
                    .is_some_and(|id| id == pending_id)
            });
            open.set(None);
            notice.set(None);
            outbox.hold(
                Held {
                    pending_id,
                    alike,
                    submission,
                    what,
                },
                send,
            );
            if let Some(at) = at {
                set_timeout(
                    move || focus_row(at.min(row_buttons().len().saturating_sub(1))),
                    Duration::ZERO,
                );
            }
        },
    );
    let undo = Callback::new(move |()| {
        if let Some(h) = outbox.take() {
            open.set(Some(h.pending_id.clone()));
            set_timeout(move || keys::focus_pending(&h.pending_id), Duration::ZERO);
        }
    });
    // A page that goes away sends what it holds, at once.
    let away = window_event_listener(leptos::ev::pagehide, move |_| {
        if let Some(h) = outbox.take() {
            api::respond_on_leaving(&h.pending_id, &h.alike, &h.submission);
        }
    });
    on_cleanup(move || away.remove());

    let list = move |mine: bool| {
        view! {
            <ul class="inbox-list" data-testid=mine.then_some("inbox-mine")>
                <For
                    each=move || tasks(mine)
                    // The heading's count rides in the key's last part: a
                    // row that gains or loses its heading is made again.
                    key=|(b, alike, head)| {
                        (b.pending_id.clone(), alike.len(), format!("{}|{head:?}", b.assignee))
                    }
                    children=move |(bundle, alike, head)| {
                        view! { <Row bundle=bundle alike=alike head=head split=split open=open titles=titles drafts=drafts on_done=on_done hold=hold /> }
                    }
                />
            </ul>
        }
    };
    let count = move || waiting.bundles.with(Vec::len);
    view! {
        <section class="inbox" data-testid="inbox" aria-labelledby="inbox-heading">
            <div class="section-head">
                <h2 id="inbox-heading">"Waiting for you"</h2>
                <NotifyButton />
            </div>
            {move || waiting.error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <p class="hint loading-rows" data-testid="inbox-loading" hidden=move || waiting.loaded.get()>
                "Loading what waits for you…"
            </p>
            <Show when=move || waiting.loaded.get() && count() == 0 && outbox.holds().is_none()>
                <div data-testid="inbox-empty">
                    <p>"Nothing is waiting for you."</p>
                    // A first visit has no agent yet: say how one asks (issue 29),
                    // and how to try it without one (issue 46 item 11).
                    <p class="hint" data-testid="inbox-connect">
                        "An agent asks you through " <code>"clarify mcp"</code>
                        ", which its MCP client starts: for Claude Code, "
                        <code>"claude mcp add clarify -- clarify mcp"</code>
                        ". Other clients: the README's \"Connect your agent\". To try it with sample questions, run "
                        <code>"clarify serve --demo"</code> "."
                    </p>
                </div>
            </Show>
            <label class="filter" hidden=move || { count() < FILTER_FROM }>
                <span>"Filter"</span>
                <input
                    type="search"
                    data-testid="inbox-filter"
                    placeholder="Task or question"
                    on:input=move |ev| filter.set(event_target_value(&ev))
                />
            </label>
            // What is assigned to this person comes first (issue 29 item 6).
            <Show when=move || !tasks(true).is_empty()>
                <h3 class="for-you" data-testid="inbox-for-you">"For you"</h3>
            </Show>
            {list(true)}
            {list(false)}
            <Show when=move || { count() > 0 }>
                <p class="hint keys">"j/k move · Enter or 1–9 open · Esc close"</p>
            </Show>
            <Show when=move || waiting.more.get()>
                <p class="hint">"More are waiting than shown: answer these first."</p>
            </Show>
        </section>
        <toast::Toasts held=outbox.held undo=undo notice=notice settled=settled />
        // Below the rows once they are in: shown earlier, the rows' arrival
        // pushed it away, the page's whole layout shift (issue 46, CLS).
        <Show when=move || waiting.loaded.get() || waiting.error.with(Option::is_some)>
            <TaskList />
        </Show>
    }
}
