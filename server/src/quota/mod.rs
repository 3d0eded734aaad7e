//! Places counted per user and in total (issue 26, item 5): event sockets,
//! long waits. A user's places include those of the agents of every
//! session the user created ([`Caller::holder`]), so minting agent tokens
//! buys no more room, and each server-wide cap leaves room for the others.

mod tally;

use std::sync::Arc;

pub use tally::{Held, Taken, Tally};

use crate::auth::Caller;

/// Open sessions one user may have created, by default
/// (`--max-open-sessions`); a user's long waits are bounded at twice this.
pub const MAX_OPEN_SESSIONS: usize = 1000;

/// Why a place was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// This user holds their share already.
    User,
    /// The server holds all it will.
    Server,
}

/// What a kind of place tells whoever is refused one.
#[derive(Debug, Clone, Copy)]
pub struct Refusals {
    /// When the user holds their share.
    pub user: &'static str,
    /// When the server holds all it will.
    pub server: &'static str,
}

/// One kind of place, counted per user and in total.
#[derive(Debug)]
pub struct Places {
    per_user: usize,
    total: usize,
    refusals: Refusals,
    open: Tally,
}

/// One place held; dropping it frees the place.
#[derive(Debug)]
pub struct Place {
    _held: Taken,
}

impl Places {
    /// Room for `per_user` places per user and `total` in all.
    #[must_use]
    pub fn new(per_user: usize, total: usize, refusals: Refusals) -> Arc<Self> {
        Arc::new(Self {
            per_user,
            total,
            refusals,
            open: Tally::default(),
        })
    }

    /// What a refusal for `full` says.
    #[must_use]
    pub fn reason(&self, full: Full) -> &'static str {
        match full {
            Full::User => self.refusals.user,
            Full::Server => self.refusals.server,
        }
    }

    /// Takes a place for `caller`.
    ///
    /// # Errors
    /// [`Full`] when either cap is reached.
    pub fn open(self: &Arc<Self>, caller: &Caller) -> Result<Place, Full> {
        self.open
            .take(&caller.holder(), None, |held| {
                if held.total >= self.total {
                    Err(Full::Server)
                } else if held.mine >= self.per_user {
                    Err(Full::User)
                } else {
                    Ok(())
                }
            })
            .map(|held| Place { _held: held })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Agent;

    const SAY: Refusals = Refusals {
        user: "user",
        server: "server",
    };

    #[test]
    fn each_cap_holds_and_a_freed_place_can_be_taken_again() {
        let places = Places::new(2, 3, SAY);
        let alice = Caller::User("alice".into());
        let bob = Caller::User("bob".into());
        let a1 = places.open(&alice).unwrap();
        let _a2 = places.open(&alice).unwrap();
        assert_eq!(places.open(&alice).unwrap_err(), Full::User);
        let _b1 = places.open(&bob).unwrap();
        assert_eq!(places.open(&bob).unwrap_err(), Full::Server);
        drop(a1);
        assert!(places.open(&bob).is_ok(), "a place came free");
    }

    #[test]
    fn an_agent_counts_against_the_user_who_created_its_session() {
        let places = Places::new(2, 10, SAY);
        let agent = |session: &str| {
            Caller::Agent(Agent {
                session_id: session.into(),
                creator: Some("alice".into()),
                scoped: true,
            })
        };
        let _a = places.open(&Caller::User("alice".into())).unwrap();
        let _b = places.open(&agent("s1")).unwrap();
        assert_eq!(
            places.open(&agent("s2")).unwrap_err(),
            Full::User,
            "a fresh agent token is no fresh quota"
        );
        let orphan = Caller::Agent(Agent {
            session_id: "s3".into(),
            creator: None,
            scoped: false,
        });
        assert!(places.open(&orphan).is_ok(), "counted as the unscoped user");
    }
}
