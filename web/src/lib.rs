//! Clarify's browser overlay: a Leptos client-side app compiled to wasm and
//! served by `clarify-server`: the task list, a session's transcript and the
//! clarification overlay for its active bundle.

mod api;
mod attempts;
mod connection;
mod expiry;
mod html;
mod json;
mod notify;
mod outcome;
mod overlay;
mod routes;
mod transcript;
mod waiting;
mod wire;
mod ws;

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::prelude::wasm_bindgen;

use routes::{InboxPage, LoginPage, Route, SessionPage, TaskPage};
use waiting::Waiting;

/// Entry point run by the wasm-bindgen glue as soon as the module is
/// instantiated.
#[wasm_bindgen(start)]
pub fn start() {
    // Without the hook a Rust panic surfaces as an opaque "unreachable"
    // trap in the console.
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// Who is looking, once `/auth/me` has answered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    Unknown,
    /// Auth is off (`user` none), or on and `user` is logged in.
    Ready {
        user: Option<String>,
    },
    /// Auth is on and nobody is logged in.
    Anonymous,
}

/// Who is logged in (their user name; `None` with auth off), for pages
/// that put what is theirs first (issue 29 item 6).
#[derive(Debug, Clone, Copy)]
pub struct Me(pub Signal<Option<String>>);

/// The page shell: header, then the page the path names.
#[component]
pub fn App() -> impl IntoView {
    let path = window().location().pathname().unwrap_or_default();
    let route = Route::parse(&path);
    let identity = RwSignal::new(Identity::Unknown);
    let waiting = Waiting::provide();
    provide_context(Me(Signal::derive(move || match identity.get() {
        Identity::Ready { user } => user,
        _ => None,
    })));
    spawn_local(async move {
        let known = match api::me().await {
            Ok(me) if me.auth_enabled && me.user.is_none() => Identity::Anonymous,
            Ok(me) => Identity::Ready {
                user: me
                    .auth_enabled
                    .then(|| me.user.map(|u| u.name).unwrap_or_default()),
            },
            // An older server without /auth/me: behave as auth off.
            Err(_) => Identity::Ready { user: None },
        };
        // Someone who may answer: count what waits for them, on every page.
        if matches!(known, Identity::Ready { .. }) {
            waiting.start();
        }
        identity.set(known);
    });
    let logout = move |_| {
        spawn_local(async move {
            let _ = api::logout().await;
            let _ = window().location().set_href("/login");
        });
    };
    let page = move || {
        let route = route.clone();
        match (identity.get(), route) {
            (Identity::Unknown, _) => {
                view! { <p class="hint" aria-busy="true">"Loading…"</p> }.into_any()
            }
            (_, Route::Login) | (Identity::Anonymous, _) => view! { <LoginPage /> }.into_any(),
            (_, Route::Inbox) => view! { <InboxPage /> }.into_any(),
            (_, Route::Task(id)) => view! { <TaskPage task_id=id /> }.into_any(),
            // Its own heading: a session's page opened by its link (issue 46 item 10).
            (_, Route::Session(id)) => view! {
                <h2 class="page-title">"A session's questions"</h2>
                <SessionPage session_id=id />
            }
            .into_any(),
            (_, Route::NotFound) => view! {
                <h2 data-testid="not-found">"Page not found"</h2>
                <p>"Nothing is at this address. " <a href="/">"Go to what waits for you"</a></p>
            }
            .into_any(),
        }
    };
    view! {
        <header>
            <h1><a href="/">"Clarify"</a></h1>
            // A page the server writes (issue 49 item 2): a plain link.
            <a href="/activity">"Activity"</a>
            {move || match identity.get() {
                Identity::Ready { user: Some(name) } => {
                    view! {
                        <p class="signed-in" data-testid="who">
                            "Logged in as "
                            <strong>{name}</strong>
                        </p>
                        <button type="button" class="secondary" data-testid="logout" on:click=logout>
                            "Log out"
                        </button>
                    }
                        .into_any()
                }
                _ => ().into_any(),
            }}
        </header>
        <connection::Banner />
        <main>{page}</main>
    }
}
