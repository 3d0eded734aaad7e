//! The overlay's buttons: "Decline…" (a decline, said as one: issue 46
//! item 6, never "Skip" beside an option that may be called "Skip"), Next,
//! Submit.

use leptos::prelude::*;

/// The row of buttons under the card.
#[component]
pub(super) fn Actions(
    count: usize,
    step: Signal<usize>,
    submitting: RwSignal<bool>,
    declining: RwSignal<bool>,
    can_submit: Signal<bool>,
    next: Callback<()>,
    submit: Callback<()>,
) -> impl IntoView {
    view! {
        <div class="actions">
            <button
                type="button"
                class="secondary"
                data-testid="clarification-skip"
                disabled=move || submitting.get()
                aria-expanded=move || declining.get().to_string()
                on:click=move |_| declining.set(true)
            >
                "Decline…"
            </button>
            <Show when=move || step.get() + 1 < count>
                <button type="button" class="secondary" data-testid="clarification-next" on:click=move |_| next.run(())>
                    "Next"
                </button>
            </Show>
            <button
                type="button"
                data-testid="clarification-submit"
                disabled=move || !can_submit.get()
                aria-busy=move || submitting.get().then_some("true")
                on:click=move |_| submit.run(())
            >
                <Show when=move || submitting.get()>
                    <span class="spinner" aria-hidden="true"></span>
                </Show>
                {move || if submitting.get() { "Sending…" } else { "Submit" }}
            </button>
        </div>
    }
}
