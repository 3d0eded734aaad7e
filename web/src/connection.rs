//! Whether the server can be reached, as the socket and every request tell
//! it, and the banner that says so (issue 29 item 2: "the ground, shown").
//!
//! A closed socket or a fetch that never reached the server marks the
//! server lost; an opened socket or any HTTP answer marks it back. A socket
//! closed by a restart that reopens at once shows nothing: the banner waits
//! [`GRACE`] before it believes the loss.

use std::cell::Cell;
use std::time::Duration;

use leptos::prelude::*;

/// How long a loss must last before the banner shows: well inside the 2 s
/// the issue asks for, long enough to hide a socket's quick reconnect.
const GRACE: Duration = Duration::from_millis(600);

// Reference-counted signals: an arena one would belong to whichever
// component first touched it, and die with it.
thread_local! {
    /// Whether the banner is up (read by components, so a signal).
    static LOST: ArcRwSignal<bool> = ArcRwSignal::new(false);
    /// Bumped at every sign of life, so a pending grace timer knows it is stale.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
    /// A loss was seen and no sign of life since.
    static DOUBT: Cell<bool> = const { Cell::new(false) };
    /// How many times the server came back after a loss (tracked).
    static RETURNS: ArcRwSignal<u64> = ArcRwSignal::new(0);
}

/// Whether the server is out of reach right now (tracked).
pub fn lost() -> bool {
    LOST.with(ArcRwSignal::get)
}

/// The socket closed or a request never reached the server.
pub fn lose() {
    DOUBT.with(|d| d.set(true));
    let epoch = EPOCH.with(Cell::get);
    set_timeout(
        move || {
            if EPOCH.with(Cell::get) == epoch {
                LOST.with(|l| l.set(true));
            }
        },
        GRACE,
    );
}

/// The server answered (a socket opened, or any HTTP status came back).
pub fn found() {
    EPOCH.with(|e| e.set(e.get() + 1));
    if DOUBT.with(|d| d.replace(false)) {
        LOST.with(|l| l.set(false));
        RETURNS.with(|r| r.update(|n| *n += 1));
    }
}

/// Changes each time the server is back after a loss (tracked): an error
/// that only said "cannot reach the server" is stale from then on.
pub fn returns() -> u64 {
    RETURNS.with(ArcRwSignal::get)
}

/// The banner: shown while the server is out of reach, gone when it is back.
#[component]
pub fn Banner() -> impl IntoView {
    // A live region present from the start, so its change is announced.
    view! {
        <div class="connection" role="status" aria-live="polite">
            <Show when=lost>
                <p class="banner offline" data-testid="offline-banner">
                    "Cannot reach the server. Reconnecting… Nothing you typed is lost."
                </p>
            </Show>
        </div>
    }
}
