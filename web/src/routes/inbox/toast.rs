//! The inbox's messages, where a person looks (issue 46 item 3): fixed at
//! the bottom of the window, never above it. A held answer with its Undo,
//! what became of a sent one, and a question settled elsewhere.

use leptos::prelude::*;

use super::held::{HOLD, Held};
use crate::overlay::{Overtaken, OvertakenCard};

/// The toasts.
#[component]
pub(super) fn Toasts(
    held: RwSignal<Option<Held>>,
    undo: Callback<()>,
    notice: RwSignal<Option<String>>,
    settled: RwSignal<Option<Overtaken>>,
) -> impl IntoView {
    // One element each, always there, whose words and visibility change:
    // cheaper for the wasm than views made and unmade (issue 46's budget).
    let held_text = move || held.with(|h| h.as_ref().map(|h| h.what.clone()).unwrap_or_default());
    let note = move || notice.get().unwrap_or_default();
    view! {
        <div class="toasts">
            <div role="status" aria-live="polite">
                <div class="toast" data-testid="inbox-held" hidden=move || held.with(Option::is_none)>
                    <p>
                        <strong>"Answered "</strong>
                        <span inner_html=held_text></span>
                        <span class="hint">{format!(" Sending in {} s.", HOLD.as_secs())}</span>
                    </p>
                    <button type="button" class="secondary" data-testid="inbox-undo" on:click=move |_| undo.run(())>
                        "Undo"
                    </button>
                </div>
                <div class="toast" data-testid="inbox-toast" hidden=move || notice.with(Option::is_none)>
                    <p data-testid="inbox-notice" inner_html=note></p>
                    <button type="button" class="secondary" aria-label="Dismiss" on:click=move |_| notice.set(None)>
                        "×"
                    </button>
                </div>
            </div>
            // The latest one: a person reads one at a time.
            {move || {
                settled
                    .get()
                    .map(|o| {
                        view! {
                            <div class="toast wide">
                                <OvertakenCard overtaken=o dismiss=Callback::new(move |()| settled.set(None)) />
                            </div>
                        }
                    })
            }}
        </div>
    }
}
