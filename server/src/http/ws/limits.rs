//! How many event sockets (WebSockets and `/pending/stream`) may be open:
//! per user and in total, so that one client (or a page opened in a loop)
//! cannot hold the server's memory and its event fan-out hostage.

use std::sync::Arc;

use crate::quota::{Places, Refusals};

/// Sockets one user (with their agents) may hold open, by default (tabs,
/// devices).
pub const PER_USER: usize = 64;

/// Sockets the server holds open at most, by default.
pub const TOTAL: usize = 4096;

/// What a refused socket is told.
const REFUSALS: Refusals = Refusals {
    user: "too many event sockets open for this user; close some tabs",
    server: "too many event sockets open on this server; try again later",
};

/// The event sockets' places: `per_user` each, `total` in all.
#[must_use]
pub fn sockets(per_user: usize, total: usize) -> Arc<Places> {
    Places::new(per_user, total, REFUSALS)
}
