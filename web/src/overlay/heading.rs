//! The overlay's heading (issue 29 item 3): the task, not "the agent".

use leptos::prelude::*;

use crate::api;

/// The overlay's heading: the task's title, and which of its sessions
/// asks when it has several ("Migrate billing — frontend agent"). Left to
/// the generic words if the task cannot be read; set only while the
/// overlay is there to show it.
pub(super) async fn task_heading(
    task_id: String,
    session_id: String,
    heading: RwSignal<Option<String>>,
) {
    let Ok(task) = api::task(&task_id).await else {
        return;
    };
    let mut text = task.title;
    if let Ok(sessions) = api::sessions(&task_id).await
        && sessions.len() > 1
        && let Some((n, s)) = sessions
            .iter()
            .enumerate()
            .find(|(_, s)| s.id == session_id)
    {
        let which = if s.description.is_empty() {
            format!("session {}", n + 1)
        } else {
            s.description.clone()
        };
        text = format!("{text} — {which}");
    }
    heading.try_set(Some(text));
}
