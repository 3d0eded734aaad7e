//! The connection's state machine checked as a model (issue 48): random
//! runs of events, each step compared with what a person expects of a
//! connection, whatever the interleaving of late reports.

use proptest::prelude::*;

use super::link::{Event, LONGEST_WAIT, Link};

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Start),
        Just(Event::HeldElsewhere),
        Just(Event::LeaseTaken),
        Just(Event::Opened),
        Just(Event::Failed),
        Just(Event::Dropped),
        Just(Event::LeaseLost),
        Just(Event::Stop),
    ]
}

fn failures(link: Link) -> u32 {
    match link {
        Link::Connecting { failures } | Link::Retrying { failures } => failures,
        _ => 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn a_connection_is_up_only_once_opened_and_parks_when_the_lease_goes(
        events in proptest::collection::vec(event(), 0..60)
    ) {
        let mut link = Link::Off;
        for event in events {
            let next = link.transition(event);
            // Up only by opening a connection being made, and it stays up
            // until something ends it.
            if next == Link::Up {
                let opened = matches!(link, Link::Connecting { .. }) && event == Event::Opened;
                prop_assert!(link == Link::Up || opened, "{:?} then {:?}", link, event);
            }
            if link == Link::Up && matches!(event, Event::Start | Event::Opened | Event::LeaseTaken) {
                prop_assert_eq!(next, Link::Up);
            }
            // Shutting down always stops; losing the lease always parks a
            // running connection.
            if event == Event::Stop {
                prop_assert_eq!(next, Link::Off);
            }
            if link != Link::Off && matches!(event, Event::LeaseLost | Event::HeldElsewhere) {
                prop_assert_eq!(next, Link::Standby);
            }
            // Standby is left only by taking the lease or stopping.
            if link == Link::Standby && next != Link::Standby {
                prop_assert!(matches!(event, Event::LeaseTaken | Event::Stop));
            }
            // A failure adds one, at most; only a connection that worked
            // or a fresh start counts from zero again.
            prop_assert!(failures(next) <= failures(link) + 1);
            if failures(next) < failures(link) {
                let reset = matches!(next, Link::Up | Link::Standby | Link::Off);
                prop_assert!(reset, "{:?} then {:?}: {:?}", link, event, next);
            }
            // A wait exists exactly while retrying, and never beyond a minute.
            prop_assert_eq!(next.delay().is_some(), matches!(next, Link::Retrying { .. }));
            prop_assert!(next.delay().unwrap_or_default() <= LONGEST_WAIT);
            link = next;
        }
    }

    #[test]
    fn the_wait_grows_with_failures_and_tops_out_at_a_minute(a in 0u32..40, b in 0u32..40) {
        let wait = |failures| Link::Retrying { failures }.delay().unwrap();
        if a <= b {
            prop_assert!(wait(a) <= wait(b));
        }
        prop_assert_eq!(wait(40), LONGEST_WAIT);
    }
}

#[test]
fn a_dropped_connection_comes_back_at_once_and_a_failing_one_waits() {
    let up = Link::Up;
    let dropped = up.transition(Event::Dropped);
    assert_eq!(dropped.delay(), Some(std::time::Duration::ZERO));
    let again = dropped.transition(Event::Start).transition(Event::Failed);
    assert_eq!(again, Link::Retrying { failures: 1 });
    assert_eq!(again.delay(), Some(std::time::Duration::from_secs(1)));
    assert!(again.is_down());
    assert_eq!(again.phrase(), "down, retrying (1 failed)");
    assert_eq!(Link::Off.transition(Event::Opened), Link::Off);
}
