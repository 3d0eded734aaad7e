//! `/login`: paste a token; the server answers with an HttpOnly cookie.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;

/// The login form.
#[component]
pub fn LoginPage() -> impl IntoView {
    let token = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        busy.set(true);
        let t = token.get_untracked();
        spawn_local(async move {
            match api::login(t.trim()).await {
                Ok(()) => {
                    let _ = window().location().set_href("/");
                }
                Err(e) => {
                    error.set(Some(e.message()));
                    busy.set(false);
                }
            }
        });
    };
    view! {
        <h2>"Log in"</h2>
        <form class="field" on:submit=submit>
            <label for="login-token">"Access token"</label>
            <input
                id="login-token"
                data-testid="login-token"
                type="password"
                autocomplete="off"
                aria-describedby="login-hint"
                prop:value=token
                on:input=move |ev| token.set(event_target_value(&ev))
            />
            <p class="hint" id="login-hint" data-testid="login-hint">
                "An access token comes from whoever runs this server: "
                <code>"clarify token create --user NAME"</code>
                " prints one."
            </p>
            {move || {
                error
                    .get()
                    .map(|e| view! { <p class="error" role="alert" data-testid="login-error" inner_html=crate::html::with_code(&e)></p> })
            }}
            <button type="submit" data-testid="login-submit" disabled=move || busy.get()>
                "Log in"
            </button>
        </form>
    }
}
