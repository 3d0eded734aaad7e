//! Who a question is for, and reassigning it (issue 29 item 6): anyone who
//! may see it may; everyone may still answer.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;

/// "For bob", and a field to give it to someone else (empty: nobody).
#[component]
pub(super) fn Assign(pending_id: String, assignee: String) -> impl IntoView {
    let current = RwSignal::new(assignee);
    let typed = RwSignal::new(current.get_untracked());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let pending_id = StoredValue::new(pending_id);
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        let name = typed.get_untracked();
        spawn_local(async move {
            match api::assign(&pending_id.get_value(), &name).await {
                Ok(view) => {
                    current.try_set(view.bundle.assignee);
                    error.try_set(None);
                }
                Err(e) => {
                    error.try_set(Some(format!("Not reassigned. {}", e.message())));
                }
            }
            busy.try_set(false);
        });
    };
    // Folded away under one line, so it never stands between an answer and
    // Submit; open, it takes a name.
    view! {
        <details class="assign" data-testid="clarification-assign">
            <summary data-testid="clarification-assignee">
                {move || match current.get().as_str() {
                    "" => "Assign to someone".to_owned(),
                    name => format!("For {name} · reassign"),
                }}
            </summary>
            <form on:submit=save>
                <label for="clarification-assign-input">"Assign to"</label>
                <input
                    id="clarification-assign-input"
                    data-testid="clarification-assign-input"
                    autocomplete="off"
                    maxlength="64"
                    placeholder="a user name, or empty for anyone"
                    prop:value=typed
                    on:input=move |ev| typed.set(event_target_value(&ev))
                />
                <button type="submit" class="secondary" data-testid="clarification-assign-save" disabled=move || busy.get()>
                    "Assign"
                </button>
                {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            </form>
        </details>
    }
}
