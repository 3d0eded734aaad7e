//! The delivery machine as a model (issue 45, the design step): random
//! sequences of events, racing as replicas, waiters, resume targets and
//! sweeps race, driven through `clarify_core::delivery::transition`; after
//! each step the invariants every delivery path relies on must hold: an
//! answer reaches its agent once, a task is only collected by its poll, a
//! decline is never resumed, nothing is resumed once a live waiter took it,
//! a refused dispatch reopens the bundle, a kept answer is never swept.
//! (The server's paths across processes are the black-box suites':
//! delivery.rs, faults.rs, replicas.rs.)
#![cfg(not(target_arch = "wasm32"))]

use clarify_core::delivery::{Event, Facts, Route, State, route, transition};
use proptest::prelude::*;

/// One thing that may happen next.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A claim, with what it reads under its lock.
    Claim(Facts),
    /// The claiming replica's hand-over, with what it reads then: whether
    /// the bundle is polled or declined was fixed by the claim.
    HandOver {
        attached: bool,
        has_target: bool,
    },
    Other(Event),
}

fn facts() -> impl Strategy<Value = Facts> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(polled, attached, declined, has_target)| Facts {
            polled,
            attached,
            declined,
            has_target,
        },
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        facts().prop_map(Op::Claim),
        (any::<bool>(), any::<bool>()).prop_map(|(attached, has_target)| Op::HandOver {
            attached,
            has_target
        }),
        prop_oneof![
            Just(Event::DispatchAccepted),
            Just(Event::DispatchRefused),
            Just(Event::TakeBack),
            Just(Event::Pickup),
            Just(Event::Sweep),
        ]
        .prop_map(Op::Other),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4_000))]

    #[test]
    fn every_sequence_keeps_the_delivery_invariants(ops in prop::collection::vec(op(), 0..40)) {
        let mut state = State::Open;
        // What the claim in force read, and how often its answer reached
        // the agent.
        let mut claimed: Option<Facts> = None;
        let mut received = 0_u32;
        let mut taken_live = false;
        for op in ops {
            let event = match op {
                Op::Claim(facts) => Event::Claim(route(facts)),
                Op::HandOver { attached, has_target } => {
                    let Some(at_claim) = claimed else { continue };
                    Event::HandOver(route(Facts { attached, has_target, ..at_claim }))
                }
                Op::Other(event) => event,
            };
            let Ok(step) = transition(state, event) else {
                // A fenced write: nothing changed.
                continue;
            };
            if let (Op::Claim(facts), Event::Claim(_)) = (op, event) {
                prop_assert_eq!(state, State::Open, "only an open bundle is claimed (P1)");
                claimed = Some(facts);
                received = 0;
                taken_live = false;
            }
            let Some(facts) = claimed else {
                prop_assert_eq!(step.state, State::Open, "nothing moves before a claim");
                continue;
            };
            if step.to_agent {
                received += 1;
                prop_assert_eq!(received, 1, "an answer reaches its agent once");
                if facts.polled {
                    prop_assert_eq!(event, Event::Pickup, "a task is collected by its poll");
                }
                if facts.declined {
                    prop_assert!(event != Event::DispatchAccepted, "a decline is never resumed (R9)");
                }
                taken_live |= event == Event::HandOver(Route::Live);
            }
            if taken_live {
                prop_assert!(event != Event::DispatchAccepted, "resumed after a live hand-over");
            }
            if event == Event::DispatchRefused {
                prop_assert_eq!(step.state, State::Open, "a refused dispatch reopens (R7a)");
            }
            if state == State::Kept && event == Event::Sweep {
                prop_assert_eq!(step.state, State::Kept, "a kept answer is never swept away");
            }
            if state == State::Delivered {
                prop_assert_eq!(step.state, State::Delivered, "delivered is final");
            }
            prop_assert_eq!(State::from_flags(step.state.flags()), step.state);
            state = step.state;
        }
    }

    /// The path the server takes for each route ends delivered, the agent
    /// having it exactly once (a decline nobody waits for is stored, R9; a
    /// crash mid-resume is kept, R6, the dispatch having started).
    #[test]
    fn each_routes_own_path_delivers_exactly_once(facts in facts(), crash in any::<bool>()) {
        let route = route(facts);
        let mut state = transition(State::Open, Event::Claim(route)).unwrap().state;
        let path: &[Event] = match route {
            Route::Live => &[Event::HandOver(Route::Live)],
            Route::Keep => &[Event::HandOver(Route::Keep), Event::Sweep, Event::Pickup],
            Route::Store => &[Event::HandOver(Route::Store)],
            Route::Resume if crash => &[Event::Sweep],
            Route::Resume => &[Event::HandOver(Route::Resume), Event::DispatchAccepted, Event::Sweep],
        };
        let mut received = 0;
        for &event in path {
            let step = transition(state, event).unwrap();
            received += u32::from(step.to_agent);
            state = step.state;
        }
        prop_assert_eq!(state, State::Delivered);
        let expected = u32::from(!(route == Route::Store || (route == Route::Resume && crash)));
        prop_assert_eq!(received, expected);
    }
}
