//! Clarify's browser overlay: a Leptos client-side app compiled to wasm and
//! served by `clarify-server`.

use clarify_core::{MAX_TEXT_RUNES, exceeds_text_limit, rune_count};
use leptos::prelude::*;
use wasm_bindgen::prelude::wasm_bindgen;

/// Entry point run by the wasm-bindgen glue as soon as the module is
/// instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    // Without the hook a Rust panic surfaces as an opaque "unreachable"
    // trap in the console.
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// The page shell.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <main>
            <h1>"Clarify"</h1>
            <ClarificationInput />
        </main>
    }
}

/// A free-text answer with a live rune counter (W4a).
///
/// The limit is enforced by counting runes with `clarify-core`, exactly as the
/// server does, rather than with `maxLength`: browsers count UTF-16 code
/// units, which would reject valid answers containing astral characters.
#[component]
pub fn ClarificationInput() -> impl IntoView {
    let (text, set_text) = signal(String::new());
    let runes = Memo::new(move |_| text.with(|t| rune_count(t)));
    let over = Memo::new(move |_| text.with(|t| exceeds_text_limit(t)));

    view! {
        <div class="field">
            <label for="clarification-input">"Your answer"</label>
            <textarea
                id="clarification-input"
                data-testid="clarification-input"
                rows="6"
                aria-describedby="clarification-rune-counter clarification-rune-status"
                aria-invalid=move || if over.get() { "true" } else { "false" }
                prop:value=text
                on:input=move |ev| set_text.set(event_target_value(&ev))
            ></textarea>
            // Not a live region: announcing every keystroke would drown out
            // the user's own typing. The status below speaks only when the
            // limit is crossed.
            <span
                id="clarification-rune-counter"
                data-testid="clarification-rune-counter"
                class="counter"
                class:over=move || over.get()
            >
                {move || format!("{} / {MAX_TEXT_RUNES}", runes.get())}
            </span>
            // The live region must exist before its content changes, or
            // screen readers miss the announcement.
            <div id="clarification-rune-status" aria-live="polite">
                <Show when=move || over.get()>
                    <p class="error" data-testid="clarification-rune-error">
                        {move || format!("Too long: {} / {MAX_TEXT_RUNES} characters", runes.get())}
                    </p>
                </Show>
            </div>
            <button
                type="button"
                data-testid="clarification-submit"
                disabled=move || over.get()
            >
                "Submit"
            </button>
        </div>
    }
}
