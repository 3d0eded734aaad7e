//! A connection only one replica may hold (issue 48 item 2): the channels'
//! lease, on the database the run tests (SQLite, or PostgreSQL with two
//! replicas' connections). Exactly one holder at a time, a crashed holder
//! taken over within the lease, the cursor handed over, and a former
//! holder's writes refused by the fence.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clarify_server::channels::keeper::{Fence, Link, Statuses, hold};
use clarify_server::db::Db;
use clarify_tests::TestDatabase;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const TTL: Duration = Duration::from_millis(600);

/// A replica's hold of lease "telegram": every fence it is given is sent
/// on `taken`; `inside` counts holders running at once.
fn replica(
    db: Db,
    statuses: &Statuses,
    shutdown: CancellationToken,
    inside: Arc<AtomicUsize>,
    taken: mpsc::UnboundedSender<Fence>,
) -> tokio::task::JoinHandle<()> {
    let keeper = statuses.keeper("telegram", "polling");
    tokio::spawn(hold(
        db,
        "telegram".to_owned(),
        TTL,
        keeper,
        shutdown,
        move |fence, lost| {
            let (inside, taken) = (inside.clone(), taken.clone());
            async move {
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders at once"
                );
                let _ = taken.send(fence);
                lost.cancelled().await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }
        },
    ))
}

/// Issue 48 item 2: one holder; a holder that dies (its task dropped, as a
/// crash drops it, nothing released) is taken over within the lease; the
/// cursor it stored is the next holder's, and its own later write is refused.
#[tokio::test]
async fn one_replica_holds_a_lease_and_another_takes_over_when_it_dies() {
    let database = TestDatabase::create().await;
    let (first_db, second_db) = (
        Db::connect(database.url()).await.unwrap(),
        Db::connect(database.url()).await.unwrap(),
    );
    let inside = Arc::new(AtomicUsize::new(0));
    let (taken, mut fences) = mpsc::unbounded_channel();
    let (first_statuses, second_statuses) = (Statuses::default(), Statuses::default());
    let (first_stop, second_stop) = (CancellationToken::new(), CancellationToken::new());
    let first = replica(
        first_db.clone(),
        &first_statuses,
        first_stop.clone(),
        inside.clone(),
        taken.clone(),
    );
    let held = fences.recv().await.unwrap();
    assert!(held.set_cursor(&first_db, "offset 41").await.unwrap());
    let second = replica(
        second_db.clone(),
        &second_statuses,
        second_stop.clone(),
        inside.clone(),
        taken,
    );

    // The second waits while the first renews, for several leases' time.
    let waited = tokio::time::timeout(TTL * 4, fences.recv()).await;
    assert!(
        waited.is_err(),
        "the lease was taken while its holder renewed it"
    );
    let standby = second_statuses.to_json();
    assert_eq!(
        standby["telegram"]["state"],
        Link::Standby.phrase(),
        "{standby}"
    );

    // A crash: the first's task is gone, its lease left to run out.
    first.abort();
    let _ = first.await;
    inside.store(0, Ordering::SeqCst);
    let started = std::time::Instant::now();
    let next = tokio::time::timeout(TTL * 4, fences.recv())
        .await
        .expect("taken over within the lease")
        .unwrap();
    assert!(started.elapsed() <= TTL * 2, "{:?}", started.elapsed());
    assert!(next.fence > held.fence);
    assert_eq!(
        next.cursor(&second_db).await.unwrap().as_deref(),
        Some("offset 41")
    );
    // The dead holder's fence writes nothing.
    assert!(!held.set_cursor(&first_db, "offset 40").await.unwrap());
    assert!(next.set_cursor(&second_db, "offset 42").await.unwrap());

    // A clean stop gives the lease up at once, for whoever comes next.
    second_stop.cancel();
    second.await.unwrap();
    assert_eq!(second_statuses.to_json()["telegram"]["state"], "off");
    let third_stop = CancellationToken::new();
    let (taken, mut fences) = mpsc::unbounded_channel();
    let third = replica(
        first_db,
        &Statuses::default(),
        third_stop.clone(),
        Arc::default(),
        taken,
    );
    let third_fence = tokio::time::timeout(TTL / 2, fences.recv())
        .await
        .expect("released")
        .unwrap();
    assert_eq!(
        third_fence.cursor(&second_db).await.unwrap().as_deref(),
        Some("offset 42")
    );
    third_stop.cancel();
    third.await.unwrap();
    drop(first_stop);
}
