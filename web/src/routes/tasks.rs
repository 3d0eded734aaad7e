//! The task list below the inbox (issue 29 item 4): newest first, each
//! task with its last activity and its newest question's outcome,
//! filtered by workspace and by "waiting", a page at a time, kept live by
//! the socket.

use leptos::prelude::*;
use leptos::task::spawn_local;

use clarify_core::PendingAction;
use clarify_core::api::Workspace;

use crate::wire::TaskRow as TaskView;

use crate::api;
use crate::ws;

/// Tasks per page.
const PAGE: usize = 50;

/// The pages of tasks shown so far, and whether more follow.
async fn load_pages(pages: usize, filter: &str) -> Result<(Vec<TaskView>, bool), api::ApiError> {
    let mut all = Vec::new();
    let mut cursor = String::new();
    for _ in 0..pages {
        let page = api::tasks_page(PAGE, &cursor, filter).await?;
        all.extend(page.tasks);
        cursor = page.next_cursor;
        if cursor.is_empty() {
            break;
        }
    }
    Ok((all, !cursor.is_empty()))
}

/// The task list, paged.
#[component]
pub fn TaskList() -> impl IntoView {
    let tasks = RwSignal::new(Vec::<TaskView>::new());
    let workspaces = RwSignal::new(Vec::<Workspace>::new());
    let pages = RwSignal::new(1usize);
    let more = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let workspace = RwSignal::new(String::new());
    let only_waiting = RwSignal::new(false);
    // "No tasks yet" only once the list has answered (issue 46 item 10).
    let ready = RwSignal::new(false);
    let generation = StoredValue::new(0u64);
    let load = move || {
        let filter = format!(
            "&order=newest&waiting={}&workspace_id={}",
            only_waiting.get_untracked(),
            workspace.get_untracked()
        );
        let mine = generation.get_value() + 1;
        generation.set_value(mine);
        spawn_local(async move {
            let loaded = load_pages(pages.get_untracked(), &filter).await;
            // The newest load owns the list: an older one answering late
            // (the filter changed meanwhile) would show the old filter's.
            if generation.get_value() != mine {
                return;
            }
            match loaded {
                Ok((list, more_follow)) => {
                    ready.set(true);
                    tasks.set(list);
                    more.set(more_follow);
                    error.set(None);
                }
                Err(api::ApiError::Offline) => {}
                Err(e) => error.set(Some(e.message())),
            }
            if let Ok(list) = api::workspaces().await {
                workspaces.set(list);
            }
        });
    };
    load();
    // Every kind of event can change a task's outcome or waiting mark.
    ws::listen(move |_| load());
    let refilter = move || {
        pages.set(1);
        load();
    };

    view! {
        <section class="task-list" aria-labelledby="tasks-heading">
            <div class="section-head">
                <h2 id="tasks-heading">"Tasks"</h2>
                <div class="filters">
                    <label for="tasks-workspace">"Workspace"</label>
                    <select
                        id="tasks-workspace"
                        data-testid="tasks-workspace"
                        on:change=move |ev| {
                            workspace.set(event_target_value(&ev));
                            refilter();
                        }
                    >
                        <option value="">"All"</option>
                        {move || {
                            workspaces
                                .get()
                                .into_iter()
                                .map(|w| view! { <option value=w.id>{w.name}</option> })
                                .collect_view()
                        }}
                    </select>
                    <label class="check">
                        <input
                            type="checkbox"
                            data-testid="tasks-waiting"
                            on:change=move |ev| {
                                only_waiting.set(event_target_checked(&ev));
                                refilter();
                            }
                        />
                        "Waiting only"
                    </label>
                </div>
            </div>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <Show when=move || ready.get() && tasks.with(Vec::is_empty)>
                <p>"No tasks yet."</p>
            </Show>
            <ul class="tasks">{move || tasks.get().into_iter().map(task_row).collect_view()}</ul>
            <Show when=move || more.get()>
                <button
                    type="button"
                    class="secondary"
                    data-testid="tasks-more"
                    on:click=move |_| {
                        pages.update(|p| *p += 1);
                        load();
                    }
                >
                    "More tasks"
                </button>
            </Show>
        </section>
    }
}

/// A task's newest question's outcome, as a person says it.
fn outcome_words(outcome: &str) -> &'static str {
    match outcome {
        "answered" => "answered",
        "defaulted" => "defaults chosen",
        "rejected" => "declined",
        "expired" => "expired",
        "cancelled" => "withdrawn",
        "superseded" => "left unanswered",
        _ => "",
    }
}

fn task_row(t: TaskView) -> impl IntoView {
    let waiting = t.task_pending_action == Some(PendingAction::Clarification);
    let words = outcome_words(&t.last_outcome);
    let ago = js_sys::Date::parse(&t.last_activity_at);
    // Whole seconds of a span of milliseconds: exact enough.
    #[allow(clippy::cast_possible_truncation)]
    let ago = (!ago.is_nan()).then(|| {
        let seconds = ((js_sys::Date::now() - ago) / 1000.0) as i64;
        match crate::waiting::age_text(seconds).as_str() {
            "now" => "just now".to_owned(),
            age => format!("{age} ago"),
        }
    });
    view! {
        <li data-testid="task-item" data-outcome=t.last_outcome.clone()>
            <a href=format!("/t/{}", t.id)>{t.title}</a>
            {waiting
                .then(|| {
                    view! {
                        <span class="pending" data-testid="task-pending-indicator">
                            "waiting for input"
                        </span>
                    }
                })}
            {(!waiting && !words.is_empty())
                .then(|| view! { <span class="outcome-tag" data-testid="task-outcome">{words}</span> })}
            {ago.map(|a| view! { <span class="hint" data-testid="task-activity">{a}</span> })}
        </li>
    }
}
