//! Opt-in browser notifications: asked for only when the person clicks
//! "Notify me", and shown only for a question that arrives while the tab
//! is hidden (a visible tab already shows it).

use clarify_core::PendingBundle;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsValue;
use web_sys::{Notification, NotificationOptions, NotificationPermission};

/// Whether this browser has notifications at all (not every one does, and
/// calling a missing API would trap).
fn supported() -> bool {
    js_sys::Reflect::has(&window(), &JsValue::from_str("Notification")).unwrap_or(false)
}

fn permission() -> Option<NotificationPermission> {
    supported().then(Notification::permission)
}

/// Tells the person about `bundle` if they asked to be told and are
/// looking elsewhere.
pub fn arrived(bundle: &PendingBundle) {
    if permission() != Some(NotificationPermission::Granted) || !document().hidden() {
        return;
    }
    let options = NotificationOptions::new();
    options.set_body(bundle.questions.first().map_or("", |q| q.prompt.as_str()));
    // One notification per bundle, however often the list reloads.
    options.set_tag(&bundle.pending_id);
    let _ = Notification::new_with_options("An agent is waiting for your answer", &options);
}

/// The "Notify me" button, shown while the browser has not been asked.
#[component]
pub fn NotifyButton() -> impl IntoView {
    let undecided = RwSignal::new(permission() == Some(NotificationPermission::Default));
    let ask = move |_| {
        let Ok(promise) = Notification::request_permission() else {
            return;
        };
        spawn_local(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
            undecided.set(permission() == Some(NotificationPermission::Default));
        });
    };
    view! {
        <Show when=move || undecided.get()>
            <button type="button" class="secondary" data-testid="notify-me" on:click=ask>
                "Notify me"
            </button>
        </Show>
    }
}
