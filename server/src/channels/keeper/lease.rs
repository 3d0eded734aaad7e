//! A connection only one replica may hold (issue 48 item 2): Telegram
//! answers a second `getUpdates` with 409, Discord allows one gateway
//! session per bot, and two ntfy subscribers would answer every reply
//! twice over. [`hold`] runs the connection while this replica holds the
//! lease row, renews it, and stops the connection the moment it is lost; a
//! replica that dies leaves the row to expire, and another takes it over
//! within the lease's time, with the cursor stored under the old fence.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::link::Event;
use super::status::Keeper;
use crate::clock::{micros, now_micros};
use crate::db::{Db, channel_leases};

/// How long a lease lasts unless renewed: a dead holder's connection is
/// taken over within this (plus a try's interval).
pub const LEASE: Duration = Duration::from_secs(10);

/// This replica's hold of a lease: what its writes are fenced with.
#[derive(Debug, Clone)]
pub struct Fence {
    /// The lease's name ("telegram").
    pub name: String,
    /// Who holds it: one id per [`hold`].
    pub holder: Arc<str>,
    /// Bumped at every take-over: a former holder's writes are refused.
    pub fence: i64,
}

impl Fence {
    /// The cursor kept with the lease (Telegram's next offset, ntfy's last
    /// message id, Discord's session).
    ///
    /// # Errors
    /// Database errors.
    pub async fn cursor(&self, db: &Db) -> sqlx::Result<Option<String>> {
        channel_leases::cursor(db.pool(), &self.name).await
    }

    /// Stores `value` as the cursor while this replica still holds the
    /// lease: false when it was lost (the caller stops at once).
    ///
    /// # Errors
    /// Database errors.
    pub async fn set_cursor(&self, db: &Db, value: &str) -> sqlx::Result<bool> {
        channel_leases::set_cursor(db, &self.name, &self.holder, self.fence, value).await
    }
}

/// Runs `body` whenever this replica holds lease `name` (see the module):
/// `body` gets the fence and a token cancelled when the lease is lost or
/// the server stops; when it returns with the lease still held it runs
/// again, after the keeper's backoff. Returns at shutdown, giving the lease
/// up.
pub async fn hold<F, Fut>(
    db: Db,
    name: String,
    ttl: Duration,
    keeper: Keeper,
    shutdown: CancellationToken,
    mut body: F,
) where
    F: FnMut(Fence, CancellationToken) -> Fut + Send,
    Fut: Future<Output = ()> + Send,
{
    let holder: Arc<str> = crate::ids::new_id().into();
    let retry = ttl / 3;
    while !shutdown.is_cancelled() {
        let now = now_micros();
        let fence = match channel_leases::take(&db, &name, &holder, now, now + micros(ttl)).await {
            Ok(Some(fence)) => fence,
            Ok(None) => {
                keeper.on(Event::HeldElsewhere);
                if !wait(&shutdown, retry).await {
                    break;
                }
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, lease = %name, "cannot take the channel's lease");
                if !wait(&shutdown, retry).await {
                    break;
                }
                continue;
            }
        };
        let fence = Fence {
            name: name.clone(),
            holder: holder.clone(),
            fence,
        };
        keeper.on(Event::LeaseTaken);
        let lost = shutdown.child_token();
        // Renewed beside the connection, in this task: whatever drops this
        // future (a crash, an abort) stops both, and the lease runs out.
        let running = async {
            loop {
                body(fence.clone(), lost.clone()).await;
                if lost.is_cancelled() || !keeper.pause(&lost).await {
                    break;
                }
                keeper.on(Event::Start);
            }
            lost.cancel();
        };
        tokio::join!(running, renew(&db, &fence, ttl, &lost));
        if shutdown.is_cancelled() {
            // A clean stop hands over at once rather than after the lease.
            let _ = channel_leases::release(&db, &name, &holder, fence.fence).await;
        } else {
            keeper.on(Event::LeaseLost);
        }
    }
    keeper.on(Event::Stop);
}

/// Renews `fence`'s lease every third of `ttl` until `lost` is cancelled;
/// cancels it when the lease is no longer this holder's, or when renewal
/// has failed until the lease ran out by this replica's clock.
async fn renew(db: &Db, fence: &Fence, ttl: Duration, lost: &CancellationToken) {
    let mut until = now_micros() + micros(ttl);
    while wait(lost, ttl / 3).await {
        let next = now_micros() + micros(ttl);
        match channel_leases::renew(db, &fence.name, &fence.holder, fence.fence, next).await {
            Ok(true) => until = next,
            Ok(false) => break,
            Err(error) => {
                tracing::warn!(%error, lease = %fence.name, "cannot renew the channel's lease");
                if now_micros() >= until {
                    break;
                }
            }
        }
    }
    lost.cancel();
}

/// Sleeps `period`: false when `token` was cancelled first.
async fn wait(token: &CancellationToken, period: Duration) -> bool {
    tokio::select! {
        () = token.cancelled() => false,
        () = tokio::time::sleep(period) => !token.is_cancelled(),
    }
}
