//! A plain webhook (issue 18): the notice's JSON POSTed as queued, with
//! the row's `Idempotency-Key`, so a receiver sent one notice twice (a
//! replica died mid-send: at-least-once) keeps it once.

use crate::db::notifications::Outgoing;
use crate::resume::{Sent, Webhooks};

/// Who sends, on every request to a channel.
pub(super) const USER_AGENT: &str = concat!("clarify/", env!("CARGO_PKG_VERSION"));

/// The headers every notice of `row` is POSTed with: its key and who sends.
pub(super) fn headers(row: &Outgoing) -> Vec<(&'static str, &str)> {
    vec![
        ("idempotency-key", row.event_key.as_str()),
        ("user-agent", USER_AGENT),
    ]
}

/// One attempt at `row` (already claimed) to its webhook.
pub(super) async fn send(webhooks: &Webhooks, row: &Outgoing, what: &str) -> Sent {
    webhooks
        .post(&row.target, row.body.clone(), &headers(row), what)
        .await
}
