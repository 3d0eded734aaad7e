//! Delivery of a won claim, as one state machine (issue 45, the design
//! step): where an answer stands between the claim that picked it and the
//! agent that asked, what each event does there, and which way a claim is
//! handed over. Pure: the server reads the [`State`] from the stored flags,
//! asks [`transition`] what an event does, and writes back what it says;
//! the storage keys stay what the spec fixes ([`crate::metadata_key`]).
//!
//! # States
//!
//! | state | stored flags of the claimed rows | meaning |
//! |---|---|---|
//! | [`State::Open`] | no winner | answerable (or closed unanswered); nothing to deliver |
//! | [`State::InDelivery`] | `response_delivery_pending` | claimed; the replica that claimed is handing it over |
//! | [`State::Resuming`] | `response_delivery_pending`, `resume_attempted` | a resume dispatch was started and may have reached the agent |
//! | [`State::Kept`] | `response_delivery_pending`, `awaiting_pickup` | kept for the agent to collect (pull delivery, an MCP task) |
//! | [`State::Delivered`] | none left | the agent has it, or a decline nobody waits for is stored (R9) |
//!
//! # Transitions
//!
//! Rows are states, columns events; a cell is the next state and what the
//! agent receives (`→ agent`), `—` where the event cannot happen there
//! ([`Refused`]: a fenced write that changes nothing). `HandOver(r)` is the
//! claiming replica's decision once the claim committed, by [`route`] from
//! what it reads then (an agent may have attached meanwhile).
//!
//! | | `Claim` | `HandOver(Live)` | `HandOver(Keep)` | `HandOver(Store)` | `HandOver(Resume)` | `DispatchAccepted` | `DispatchRefused` | `TakeBack` | `Pickup` | `Sweep` |
//! |---|---|---|---|---|---|---|---|---|---|---|
//! | Open | InDelivery; Resuming when the claim itself routes [`Route::Resume`] | — | — | — | — | — | — | — | — | Open |
//! | InDelivery | — (a loser, R2b) | Delivered → agent | Kept | Delivered (R9) | Resuming | — | — | Open (R7a) | — | Open (R6: restored) |
//! | Resuming | — | Delivered → agent (attached after the claim: no dispatch) | Kept | Delivered | Resuming | Delivered → agent | Open (R7a) | Open (before any dispatch) | — | Delivered (R6: never sent twice) |
//! | Kept | — | — | — | — | — | — | — | — | Delivered → agent | Kept (not an interrupted delivery) |
//! | Delivered | — | — | — | — | — | — | — | — | — | Delivered |
//!
//! A claim's [`Route`] is decided by [`route`] from what was read
//! ([`Facts`]); whether the agent polls the bundle as an MCP task is read
//! under the claim's lock and never changes after:
//!
//! | polled as an MCP task | agent attached, not detached | declined | resume target | route |
//! |---|---|---|---|---|
//! | yes | any | any | any | [`Route::Keep`]: collected by its next poll, never handed live nor resumed (A5a, R7) |
//! | no | yes | any | any | [`Route::Live`] |
//! | no | no | yes | any | [`Route::Store`]: a decline is never resumed (R9) |
//! | no | no | no | yes | [`Route::Resume`] |
//! | no | no | no | no | [`Route::Keep`]: pull delivery |
//!
//! Who attaches ([`Waiter`], [`attaches`]): the asking session's agent
//! token, or a tokenless caller with auth off (the local user, A4; issue
//! 45 item 2: it only observed, and its agent got the answer twice, in its
//! wait and through its resume target). Anyone else observes.
//!
//! ```
//! use clarify_core::delivery::{Event, Facts, Route, State, route, transition};
//!
//! let facts = Facts { polled: false, attached: false, declined: false, has_target: true };
//! assert_eq!(route(facts), Route::Resume);
//! let claimed = transition(State::Open, Event::Claim(route(facts))).unwrap();
//! assert_eq!(claimed.state, State::Resuming);
//! let refused = transition(claimed.state, Event::DispatchRefused).unwrap();
//! assert_eq!(refused.state, State::Open); // answerable again (R7a)
//! ```

use core::fmt;

/// Where a bundle's delivery stands (see the module's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// No winner: nothing to deliver.
    Open,
    /// Claimed; being handed over by the replica that claimed.
    InDelivery,
    /// Claimed; a resume dispatch was started.
    Resuming,
    /// Claimed; kept for the agent to collect.
    Kept,
    /// The agent has it, or it is stored final (R9).
    Delivered,
}

/// The flags a bundle's claimed rows carry, as stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// A row carries `answered` or `rejected`.
    pub won: bool,
    /// `response_delivery_pending`.
    pub delivery_pending: bool,
    /// `resume_attempted`.
    pub resume_attempted: bool,
    /// `awaiting_pickup`.
    pub awaiting_pickup: bool,
}

impl State {
    /// The state stored `flags` say. Kept wins over a resume mark: a
    /// bundle kept for pickup was never dispatched.
    #[must_use]
    pub const fn from_flags(flags: Flags) -> Self {
        match flags {
            Flags { won: false, .. } => Self::Open,
            Flags {
                delivery_pending: false,
                ..
            } => Self::Delivered,
            Flags {
                awaiting_pickup: true,
                ..
            } => Self::Kept,
            Flags {
                resume_attempted: true,
                ..
            } => Self::Resuming,
            Flags { .. } => Self::InDelivery,
        }
    }

    /// The flags this state is stored as.
    #[must_use]
    pub const fn flags(self) -> Flags {
        let claimed = !matches!(self, Self::Open | Self::Delivered);
        Flags {
            won: !matches!(self, Self::Open),
            delivery_pending: claimed,
            resume_attempted: matches!(self, Self::Resuming),
            awaiting_pickup: matches!(self, Self::Kept),
        }
    }
}

/// What a claim knows of the agent when it wins, read under its lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The agent polls the bundle as an MCP task.
    pub polled: bool,
    /// The asking agent is blocked on it now (and has not detached since:
    /// its wait after a detach attaches it again).
    pub attached: bool,
    /// The outcome is a decline.
    pub declined: bool,
    /// The session names a resume target.
    pub has_target: bool,
}

/// How a won claim is handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    /// To the agent blocked on it, in its wait.
    Live,
    /// Kept for the agent to collect (pull delivery, an MCP task's poll).
    Keep,
    /// Stored final without a delivery: a decline nobody waits for (R9).
    Store,
    /// Sent through the session's resume target.
    Resume,
}

/// The one decision of how a claim is handed over (see the module's table).
#[must_use]
pub const fn route(facts: Facts) -> Route {
    match facts {
        Facts { polled: true, .. } => Route::Keep,
        Facts { attached: true, .. } => Route::Live,
        Facts { declined: true, .. } => Route::Store,
        Facts {
            has_target: true, ..
        } => Route::Resume,
        Facts { .. } => Route::Keep,
    }
}

/// Who waits on a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Waiter {
    /// The asking session's own agent token.
    AskingAgent,
    /// A caller with no token while auth is off: the local user (A4).
    LocalUser,
    /// Anyone else who may see the bundle: a person, another session's
    /// agent.
    Reader,
}

/// Whether `waiter`'s wait takes the delivery (attaches, collects what is
/// kept): the asking agent, or the local user with auth off, who is the
/// asking agent as far as anyone can tell (issue 45 item 2). A reader
/// observes the outcome and takes nothing.
#[must_use]
pub const fn attaches(waiter: Waiter) -> bool {
    matches!(waiter, Waiter::AskingAgent | Waiter::LocalUser)
}

/// Something that happens to a bundle's delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A claim won; the route the claim itself read (only
    /// [`Route::Resume`] changes what it writes: the resume mark, R6).
    Claim(Route),
    /// The claiming replica hands it over by this route.
    HandOver(Route),
    /// The resume target accepted the dispatch.
    DispatchAccepted,
    /// The resume target refused it (R7a).
    DispatchRefused,
    /// A write of the delivery failed before the agent had it: the claim
    /// is taken back (R7a).
    TakeBack,
    /// The agent collected what was kept (its wait, identical ask, read or
    /// task poll).
    Pickup,
    /// Reconciliation found the claim where a crash or a stalled replica
    /// left it (R6).
    Sweep,
}

/// What an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The state after it.
    pub state: State,
    /// The agent received the answer by it.
    pub to_agent: bool,
}

/// An event that cannot happen in a state: the write it stands for is
/// fenced off and changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refused {
    /// Where the delivery stood.
    pub state: State,
    /// What was refused.
    pub event: Event,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} cannot happen in {:?}", self.event, self.state)
    }
}

/// What `event` does in `state` (see the module's table).
///
/// # Errors
/// [`Refused`] where the table has `—`.
pub const fn transition(state: State, event: Event) -> Result<Step, Refused> {
    use Event as E;
    use State as S;
    let (next, to_agent) = match (state, event) {
        (S::Open, E::Claim(Route::Resume)) => (S::Resuming, false),
        (S::Open, E::Claim(_)) => (S::InDelivery, false),
        (S::InDelivery | S::Resuming, E::HandOver(Route::Live))
        | (S::Kept, E::Pickup)
        | (S::Resuming, E::DispatchAccepted) => (S::Delivered, true),
        (S::InDelivery | S::Resuming, E::HandOver(Route::Keep)) => (S::Kept, false),
        (S::InDelivery | S::Resuming, E::HandOver(Route::Store)) | (S::Resuming, E::Sweep) => {
            (S::Delivered, false)
        }
        (S::InDelivery | S::Resuming, E::HandOver(Route::Resume)) => (S::Resuming, false),
        (S::InDelivery, E::TakeBack | E::Sweep)
        | (S::Resuming, E::DispatchRefused | E::TakeBack) => (S::Open, false),
        (S::Open | S::Kept | S::Delivered, E::Sweep) => (state, false),
        _ => return Err(Refused { state, event }),
    };
    Ok(Step {
        state: next,
        to_agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATES: [State; 5] = [
        State::Open,
        State::InDelivery,
        State::Resuming,
        State::Kept,
        State::Delivered,
    ];

    #[test]
    fn every_state_is_stored_as_flags_that_read_back_as_itself() {
        for state in STATES {
            assert_eq!(State::from_flags(state.flags()), state, "{state:?}");
        }
    }

    #[test]
    fn a_live_waiter_takes_it_and_nothing_is_resumed_after() {
        let facts = Facts {
            polled: false,
            attached: true,
            declined: false,
            has_target: true,
        };
        assert_eq!(route(facts), Route::Live);
        let claimed = transition(State::Open, Event::Claim(Route::Live)).unwrap();
        let live = transition(claimed.state, Event::HandOver(Route::Live)).unwrap();
        assert!(live.to_agent);
        assert!(transition(live.state, Event::DispatchAccepted).is_err());
    }

    /// Issue 45 item 2, as a row: the local user's wait attaches.
    #[test]
    fn the_asking_agent_and_the_local_user_attach_a_reader_observes() {
        assert!(attaches(Waiter::AskingAgent));
        assert!(attaches(Waiter::LocalUser));
        assert!(!attaches(Waiter::Reader));
    }

    #[test]
    fn a_task_is_kept_for_its_poll_whatever_else_holds() {
        for bits in 0..8u8 {
            let facts = Facts {
                polled: true,
                attached: bits & 1 != 0,
                declined: bits & 2 != 0,
                has_target: bits & 4 != 0,
            };
            assert_eq!(route(facts), Route::Keep, "{facts:?}");
        }
    }
}
