//! `/`: every visible task by workspace, with a "waiting for input"
//! indicator kept live by the WebSocket.

use leptos::prelude::*;
use leptos::task::spawn_local;

use clarify_core::PendingAction;
use clarify_core::api::{TaskView, Workspace};

use crate::api;
use crate::ws;

/// The task list.
#[component]
pub fn TasksPage() -> impl IntoView {
    let tasks = RwSignal::new(Vec::<TaskView>::new());
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
                                        let waiting = t.task_pending_action
                                            == Some(PendingAction::Clarification);
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
