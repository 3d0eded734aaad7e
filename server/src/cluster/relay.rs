//! Messages between replicas: each is a row of `replica_messages` whose id
//! a `NOTIFY` announces (a NOTIFY payload is capped at 8000 bytes; an event
//! is not). Each replica sends in order from one queue and listens on one
//! dedicated connection.

use std::sync::Arc;

use sqlx::postgres::PgListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Relayed;
use crate::clock::now_micros;
use crate::db::{Db, replicas};
use crate::events::Events;
use crate::measure::Measure;
use crate::waiters::Waiters;

/// A listener on the replicas' channel.
pub(super) async fn listen(db: &Db) -> sqlx::Result<PgListener> {
    let mut listener = PgListener::connect(db.url()).await?;
    listener.listen(replicas::CHANNEL).await?;
    Ok(listener)
}

/// Sends the queued messages in order, until every sender is gone: requests
/// still finishing after shutdown began relay their wakes too. Those that
/// queued while one trip ran go together in the next (issue 31: one
/// transaction, not one flush to disk each).
pub(super) async fn send(db: Db, replica: Arc<str>, mut queue: mpsc::Receiver<Relayed>) {
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        send_batch(&db, &replica, &batch).await;
        batch.clear();
    }
}

/// At most this many messages share one trip.
const BATCH: usize = 64;

async fn send_batch(db: &Db, replica: &str, messages: &[Relayed]) {
    let payloads: Vec<String> = messages
        .iter()
        .filter_map(|message| serde_json::to_string(message).ok())
        .collect();
    let now = now_micros();
    let sent = async {
        let mut tx = db.begin_write_unflushed().await?;
        replicas::send_many(&mut tx, replica, &payloads, now).await?;
        tx.commit().await
    }
    .await;
    if let Err(error) = sent {
        // Lost: agents waiting elsewhere get the answer when they next read
        // (at the latest when their wait times out and they poll again);
        // browsers there when they next load.
        tracing::warn!(%error, count = payloads.len(), "could not relay messages to the other replicas");
    }
}

/// Applies the other replicas' messages here until shutdown.
pub(super) async fn receive(
    mut listener: PgListener,
    db: Db,
    replica: Arc<str>,
    (waiters, events, measure): (Waiters, Events, Measure),
    shutdown: CancellationToken,
) {
    loop {
        let notification = tokio::select! {
            () = shutdown.cancelled() => return,
            notification = listener.try_recv() => notification,
        };
        match notification {
            Ok(Some(notification)) => {
                let Some((origin, id)) = notification.payload().split_once(' ') else {
                    continue;
                };
                if origin == &*replica {
                    continue;
                }
                let Ok(id) = id.parse::<i64>() else { continue };
                apply(&db, id, &waiters, &events, &measure).await;
            }
            Ok(None) => {
                // The connection dropped and the next call reconnects:
                // whatever was announced meanwhile is lost, so every waiter
                // here re-reads its bundle.
                tracing::warn!("lost the link to the other replicas; reconnecting");
                waiters.recheck_all();
            }
            Err(error) => {
                tracing::warn!(%error, "listening to the other replicas failed; retrying");
                waiters.recheck_all();
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

async fn apply(db: &Db, id: i64, waiters: &Waiters, events: &Events, measure: &Measure) {
    let payload = match replicas::received(db.pool(), id).await {
        Ok(Some((payload, sent_at))) => {
            // By two clocks: a skew between the replicas' hosts shows here.
            let lag = u64::try_from(now_micros() - sent_at).unwrap_or(0);
            measure.observe(
                "clarify_relay_lag_seconds",
                &[],
                std::time::Duration::from_micros(lag),
            );
            payload
        }
        Ok(None) => return,
        Err(error) => {
            tracing::warn!(%error, id, "could not read a relayed message");
            waiters.recheck_all();
            return;
        }
    };
    match serde_json::from_str::<Relayed>(&payload) {
        Ok(Relayed::Event(event)) => events.publish_here(event),
        Ok(Relayed::Wake { pending_id, wake }) => waiters.wake(&pending_id, wake),
        Err(error) => tracing::warn!(%error, id, "an unreadable relayed message"),
    }
}
