//! The task list below the inbox: every visible task by workspace, a page
//! at a time, with a "waiting for input" indicator kept live by the socket.

use leptos::prelude::*;
use leptos::task::spawn_local;

use clarify_core::PendingAction;
use clarify_core::api::{TaskView, Workspace};

use crate::api;
use crate::ws;

/// Tasks per page.
const PAGE: usize = 50;

/// The pages of tasks shown so far, and whether more follow.
async fn load_pages(pages: usize) -> Result<(Vec<TaskView>, bool), api::ApiError> {
    let mut all = Vec::new();
    let mut cursor = String::new();
    for _ in 0..pages {
        let page = api::tasks_page(PAGE, &cursor).await?;
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
    let load = move || {
        spawn_local(async move {
            match load_pages(pages.get_untracked()).await {
                Ok((list, more_follow)) => {
                    tasks.set(list);
                    more.set(more_follow);
                    error.set(None);
                }
                Err(e) => error.set(Some(e.message())),
            }
            if let Ok(list) = api::workspaces().await {
                workspaces.set(list);
            }
        });
    };
    load();
    // Every kind of event can change a task's waiting indicator.
    ws::listen(move |_| load());

    // Workspaces in the server's order, then tasks without one.
    let groups = move || {
        let all = tasks.get();
        let mut names: Vec<(String, String)> = workspaces
            .get()
            .into_iter()
            .map(|w| (w.id, w.name))
            .collect();
        names.push((String::new(), "No workspace".into()));
        names
            .into_iter()
            .map(|(id, name)| {
                let list: Vec<TaskView> = all
                    .iter()
                    .filter(|t| t.task.workspace_id == id)
                    .cloned()
                    .collect();
                (name, list)
            })
            .filter(|(_, list)| !list.is_empty())
            .collect::<Vec<_>>()
    };

    view! {
        <section class="task-list" aria-labelledby="tasks-heading">
            <h2 id="tasks-heading">"Tasks"</h2>
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <Show when=move || tasks.with(Vec::is_empty)>
                <p>"No tasks yet."</p>
            </Show>
            {move || {
                groups()
                    .into_iter()
                    .map(|(name, list)| {
                        view! {
                            <section class="workspace">
                                <h3>{name}</h3>
                                <ul class="tasks">
                                    {list.into_iter().map(task_row).collect_view()}
                                </ul>
                            </section>
                        }
                    })
                    .collect_view()
            }}
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

fn task_row(t: TaskView) -> impl IntoView {
    let waiting = t.task_pending_action == Some(PendingAction::Clarification);
    view! {
        <li data-testid="task-item">
            <a href=format!("/t/{}", t.task.id)>{t.task.title}</a>
            {waiting
                .then(|| {
                    view! {
                        <span class="pending" data-testid="task-pending-indicator">
                            "waiting for input"
                        </span>
                    }
                })}
        </li>
    }
}
