//! Declining a whole bundle, R9's human skip, is never one click (issue
//! 29): "Decline…" opens this panel in the page, where a reason may be given and
//! Decline sends it; "Keep answering" closes it and nothing is sent.

use leptos::prelude::*;

/// The confirmation, shown while `open`.
#[component]
pub(super) fn Decline(
    open: RwSignal<bool>,
    busy: Signal<bool>,
    decline: Callback<String>,
) -> impl IntoView {
    let reason = RwSignal::new(String::new());
    view! {
        <Show when=move || open.get()>
            <div
                class="decline"
                role="group"
                aria-labelledby="decline-heading"
                data-testid="clarification-decline-panel"
            >
                <p id="decline-heading">
                    <strong>"Decline every question here?"</strong>
                    " The agent is told you declined, and nothing here can be answered afterwards."
                </p>
                <label for="decline-reason">"Why (optional; the agent reads it)"</label>
                <textarea
                    id="decline-reason"
                    rows="2"
                    data-testid="clarification-decline-reason"
                    prop:value=reason
                    on:input=move |ev| reason.set(event_target_value(&ev))
                ></textarea>
                <div class="actions">
                    <button
                        type="button"
                        class="secondary"
                        data-testid="clarification-decline-cancel"
                        on:click=move |_| open.set(false)
                    >
                        "Keep answering"
                    </button>
                    <button
                        type="button"
                        class="danger"
                        data-testid="clarification-decline"
                        disabled=move || busy.get()
                        on:click=move |_| decline.run(reason.get_untracked().trim().to_owned())
                    >
                        "Decline"
                    </button>
                </div>
            </div>
        </Show>
    }
}
