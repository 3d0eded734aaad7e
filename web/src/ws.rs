//! Live updates from `GET /api/v1/ws`, reconnecting with backoff.
//!
//! The socket is a convenience, never a requirement: every action the user
//! takes is settled by its own HTTP answer, so a dead socket only delays
//! what other people did. After an outage a [`EventKind::Resync`] event
//! tells listeners to reload, since whatever happened meanwhile was missed.
//!
//! A tab has one socket, opened by the first listener and kept for the
//! page's life; each connection and its handlers are dropped on every
//! reconnect, and a listener goes away with its component.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use clarify_core::EventKind;
use clarify_core::api::Event;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{MessageEvent, WebSocket};

/// What a listener is told.
type Handler = Rc<dyn Fn(Event)>;

/// One open socket with the handlers it calls; dropping it closes both.
struct Connection {
    socket: WebSocket,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_open: Closure<dyn FnMut()>,
    _on_close: Closure<dyn FnMut()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Detach first, so the close below calls nothing being dropped.
        self.socket.set_onmessage(None);
        self.socket.set_onopen(None);
        self.socket.set_onclose(None);
        let _ = self.socket.close();
    }
}

/// The listener's state, shared by its handlers and its reconnect timer.
struct Listener {
    handler: Handler,
    current: RefCell<Option<Connection>>,
    stopped: Cell<bool>,
}

thread_local! {
    /// The tab's one socket: every component listens through it.
    static SOCKET: RefCell<Option<Rc<Listener>>> = const { RefCell::new(None) };
    /// Who hears its events, by subscription number.
    static SUBSCRIBERS: RefCell<Vec<(u64, Handler)>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// Calls `on_event` for every notification, and for a synthetic
/// [`EventKind::Resync`] after the socket comes back from a drop, until the
/// calling component is cleaned up. The tab's socket opens on the first
/// call and is shared by all (one per tab, however many components listen).
pub fn listen(on_event: impl Fn(Event) + 'static) {
    SOCKET.with(|socket| {
        socket.borrow_mut().get_or_insert_with(|| {
            let listener = Rc::new(Listener {
                handler: Rc::new(dispatch),
                current: RefCell::new(None),
                stopped: Cell::new(false),
            });
            connect(&listener, 0, false);
            listener
        });
    });
    let id = NEXT_ID.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    SUBSCRIBERS.with(|s| s.borrow_mut().push((id, Rc::new(on_event))));
    on_cleanup(move || {
        let _ = SUBSCRIBERS.try_with(|s| s.borrow_mut().retain(|(i, _)| *i != id));
    });
}

/// Hands `event` to every subscriber; a list copied first, since a handler
/// may subscribe or unsubscribe (by re-rendering) while it runs.
fn dispatch(event: Event) {
    let handlers: Vec<Handler> =
        SUBSCRIBERS.with(|s| s.borrow().iter().map(|(_, h)| h.clone()).collect());
    if let Some((last, rest)) = handlers.split_last() {
        for handler in rest {
            handler(event.clone());
        }
        last(event);
    }
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

fn resync() -> Event {
    Event {
        kind: "notification".to_owned(),
        action: EventKind::Resync,
        payload: clarify_core::api::Payload::None,
        timestamp: String::new(),
    }
}

fn connect(listener: &Rc<Listener>, attempt: u32, dropped: bool) {
    if listener.stopped.get() {
        return;
    }
    let Some(socket) = url().and_then(|url| WebSocket::new(&url).ok()) else {
        retry(listener, attempt, dropped);
        return;
    };
    let handler = listener.handler.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        // A frame this version cannot read is skipped, never fatal.
        if let Some(event) = ev
            .data()
            .as_string()
            .and_then(|text| crate::json::parse::<Event>(&text).ok())
        {
            handler(event);
        }
    });
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));

    // A successful open resets the backoff.
    let opened = Rc::new(Cell::new(false));
    let flag = opened.clone();
    let handler = listener.handler.clone();
    let on_open = Closure::<dyn FnMut()>::new(move || {
        flag.set(true);
        crate::connection::found();
        if dropped {
            handler(resync());
        }
    });
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));

    let weak = Rc::downgrade(listener);
    let on_close = Closure::<dyn FnMut()>::new(move || {
        // Only schedules: this handler's own connection is replaced later,
        // never dropped while it runs.
        crate::connection::lose();
        if let Some(listener) = weak.upgrade() {
            let next = if opened.get() { 0 } else { attempt + 1 };
            retry(&listener, next, true);
        }
    });
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));

    *listener.current.borrow_mut() = Some(Connection {
        socket,
        _on_message: on_message,
        _on_open: on_open,
        _on_close: on_close,
    });
}

fn retry(listener: &Rc<Listener>, attempt: u32, dropped: bool) {
    // 0.5 s doubling up to 8 s: quick after a blip, gentle during an
    // outage, and the offline banner goes within 8 s of the server's return.
    let delay = 500u64.saturating_mul(1 << attempt.min(4)).min(8_000);
    let weak = Rc::downgrade(listener);
    set_timeout(
        move || {
            if let Some(listener) = weak.upgrade() {
                connect(&listener, attempt, dropped);
            }
        },
        Duration::from_millis(delay),
    );
}
