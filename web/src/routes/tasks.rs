//! `/`: every visible task by workspace, with a "waiting for input"
//! indicator kept live by the WebSocket.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api::{self, Task, Workspace};
use crate::ws;

/// The task list.
#[component]
pub fn TasksPage() -> impl IntoView {
    let tasks = RwSignal::new(Vec::<Task>::new());
    let workspaces = RwSignal::new(Vec::<Workspace>::new());
    let error = RwSignal::new(None::<String>);
    let load = move || {
        spawn_local(async move {
            match api::tasks().await {
                Ok(list) => {
                    tasks.set(list);
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
    ws::listen(move |event| {
        if event.action.starts_with("task.")
            || event.action.starts_with("session.message")
            || event.action == ws::RECONNECTED
        {
            load();
        }
    });

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
                let list: Vec<Task> = all
                    .iter()
                    .filter(|t| t.workspace_id == id)
                    .cloned()
                    .collect();
                (name, list)
            })
            .filter(|(_, list)| !list.is_empty())
            .collect::<Vec<_>>()
    };

    view! {
        <h2>"Tasks"</h2>
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
                                {list
                                    .into_iter()
                                    .map(|t| {
                                        let waiting = t.task_pending_action.as_deref()
                                            == Some("clarification");
                                        view! {
                                            <li data-testid="task-item">
                                                <a href=format!("/t/{}", t.id)>{t.title}</a>
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
                                    })
                                    .collect_view()}
                            </ul>
                        </section>
                    }
                })
                .collect_view()
        }}
    }
}
