//! How many event sockets may be open: per identity and in total, so that
//! one client (or a page opened in a loop) cannot hold the server's memory
//! and its event fan-out hostage.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::auth::Caller;

/// Sockets one identity may hold open, by default (tabs, devices).
pub const PER_IDENTITY: usize = 64;

/// Sockets the server holds open at most, by default.
pub const TOTAL: usize = 4096;

/// Why a socket was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// This identity holds its share already.
    Identity,
    /// The server holds all it will.
    Server,
}

impl Full {
    /// The close reason sent to the client.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Self::Identity => "too many event sockets open for this identity; close some tabs",
            Self::Server => "too many event sockets open on this server; try again later",
        }
    }
}

/// The open sockets, counted.
#[derive(Debug)]
pub struct Sockets {
    per_identity: usize,
    total: usize,
    open: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_identity: HashMap<String, usize>,
}

/// One open socket's place; dropping it frees the place.
#[derive(Debug)]
pub struct Place {
    sockets: Arc<Sockets>,
    identity: String,
}

impl Sockets {
    /// Room for `per_identity` sockets per identity and `total` in all.
    #[must_use]
    pub fn new(per_identity: usize, total: usize) -> Arc<Self> {
        Arc::new(Self {
            per_identity,
            total,
            open: Mutex::new(Counts::default()),
        })
    }

    /// Takes a place for `caller`'s socket.
    ///
    /// # Errors
    /// [`Full`] when either cap is reached.
    pub fn open(self: &Arc<Self>, caller: &Caller) -> Result<Place, Full> {
        let identity = match caller {
            Caller::Unscoped => "unscoped".to_owned(),
            Caller::User(id) => format!("user:{id}"),
            Caller::Agent { session_id } => format!("agent:{session_id}"),
        };
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.total {
            return Err(Full::Server);
        }
        let mine = open.by_identity.entry(identity.clone()).or_default();
        if *mine >= self.per_identity {
            return Err(Full::Identity);
        }
        *mine += 1;
        open.total += 1;
        Ok(Place {
            sockets: self.clone(),
            identity,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self
            .sockets
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(mine) = open.by_identity.get_mut(&self.identity) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                open.by_identity.remove(&self.identity);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cap_holds_and_a_closed_socket_frees_its_place() {
        let sockets = Sockets::new(2, 3);
        let alice = Caller::User("alice".into());
        let bob = Caller::User("bob".into());
        let a1 = sockets.open(&alice).unwrap();
        let _a2 = sockets.open(&alice).unwrap();
        assert_eq!(sockets.open(&alice).unwrap_err(), Full::Identity);
        let _b1 = sockets.open(&bob).unwrap();
        assert_eq!(sockets.open(&bob).unwrap_err(), Full::Server);
        drop(a1);
        assert!(sockets.open(&bob).is_ok(), "a place came free");
    }
}
