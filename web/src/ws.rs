//! Live updates from `GET /api/v1/ws`, reconnecting with backoff.
//!
//! The socket is a convenience, never a requirement: every action the user
//! takes is settled by its own HTTP answer, so a dead socket only delays
//! what other people did.

use std::time::Duration;

use leptos::prelude::*;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{MessageEvent, WebSocket};

/// One notification: its action and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub action: String,
    pub payload: Value,
}

/// The synthetic event delivered when the socket comes back after a drop:
/// whatever happened meanwhile was missed, so listeners reload.
pub const RECONNECTED: &str = "reconnected";

/// Connects and keeps reconnecting; `on_event` runs for every notification.
pub fn listen(on_event: impl Fn(Event) + Clone + 'static) {
    connect(on_event, 0, false);
}

fn url() -> Option<String> {
    let location = window().location();
    let scheme = if location.protocol().ok()? == "https:" {
        "wss"
    } else {
        "ws"
    };
    Some(format!("{scheme}://{}/api/v1/ws", location.host().ok()?))
}

fn connect(on_event: impl Fn(Event) + Clone + 'static, attempt: u32, dropped: bool) {
    let Some(url) = url() else { return };
    let Ok(socket) = WebSocket::new(&url) else {
        retry(on_event, attempt, dropped);
        return;
    };
    let handler = on_event.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let Some(text) = ev.data().as_string() else {
            return;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            return;
        };
        let action = value
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let payload = value.get("payload").cloned().unwrap_or(Value::Null);
        handler(Event { action, payload });
    });
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();

    // A successful open resets the backoff.
    let opened = std::rc::Rc::new(std::cell::Cell::new(false));
    let flag = opened.clone();
    let on_reopen = on_event.clone();
    let on_open = Closure::<dyn FnMut()>::new(move || {
        flag.set(true);
        if dropped {
            on_reopen(Event {
                action: RECONNECTED.to_owned(),
                payload: Value::Null,
            });
        }
    });
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    on_open.forget();

    let on_close = Closure::<dyn FnMut()>::new(move || {
        let next = if opened.get() { 0 } else { attempt + 1 };
        retry(on_event.clone(), next, true);
    });
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    on_close.forget();
}

fn retry(on_event: impl Fn(Event) + Clone + 'static, attempt: u32, dropped: bool) {
    // 0.5 s doubling up to 30 s: quick after a blip, gentle during an outage.
    let delay = 500u64.saturating_mul(1 << attempt.min(6)).min(30_000);
    set_timeout(
        move || connect(on_event, attempt, dropped),
        Duration::from_millis(delay),
    );
}
