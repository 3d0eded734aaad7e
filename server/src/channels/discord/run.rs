//! Keeping the gateway connected (issue 48 items 1 and 2): one session
//! per bot, so held under the `discord` lease by one replica at a time;
//! the session to resume (its id, sequence number and resume URL) is the
//! lease's cursor, so a replica taking over resumes where the last holder
//! stopped. Each connection reports to the channel's keeper, which waits
//! out the backoff between tries (none after a connection that was up).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::gateway::{Ended, Gateway, Progress, Session};
use super::press::Presses;
use crate::channels::Channels;
use crate::channels::keeper::{self, Event, Fence, Keeper, Statuses};
use crate::db::Db;
use crate::lifecycle::Lifecycle;

/// The lease Discord's one gateway session is held under.
const LEASE_NAME: &str = "discord";

/// Starts `channels`' Discord gateway, if a bot is configured, answering
/// presses through `lifecycle`'s claim, reporting as "discord: … (gateway)"
/// in `statuses`, held under a lease lasting `lease` ([`keeper::LEASE`]
/// when unset), until `shutdown`.
pub fn start(
    channels: &Channels,
    lifecycle: &Lifecycle,
    statuses: &Statuses,
    lease: Option<Duration>,
    shutdown: &CancellationToken,
) {
    let Some((bot, webhooks)) = channels.discord() else {
        return;
    };
    let presses = Presses::new(lifecycle.resolving.clone(), webhooks.clone(), bot.clone());
    let gateway = Gateway::new(bot.clone(), webhooks.clone(), presses);
    let keeper = statuses.keeper("discord", "gateway");
    let db = lifecycle.db().clone();
    let body = {
        let (db, keeper) = (db.clone(), keeper.clone());
        move |fence: Fence, lost: CancellationToken| {
            let (gateway, db, keeper) = (gateway.clone(), db.clone(), keeper.clone());
            async move { once(&gateway, &fence, &db, &keeper, &lost).await }
        }
    };
    tokio::spawn(keeper::hold(
        db,
        LEASE_NAME.to_owned(),
        lease.unwrap_or(keeper::LEASE),
        keeper,
        shutdown.clone(),
        body,
    ));
}

/// What a connection reports while it runs: up to the keeper, the
/// session to the lease's cursor (fenced: a former holder's is refused).
struct Leased<'a> {
    fence: &'a Fence,
    db: &'a Db,
    keeper: &'a Keeper,
    kept: Option<String>,
}

impl Progress for Leased<'_> {
    fn up(&mut self) {
        self.keeper.on(Event::Opened);
    }

    async fn keep(&mut self, session: &Session) -> bool {
        let cursor = session.to_cursor();
        if self.kept.as_deref() == Some(cursor.as_str()) {
            return true;
        }
        match self.fence.set_cursor(self.db, &cursor).await {
            Ok(held) => {
                self.kept = Some(cursor);
                held
            }
            Err(error) => {
                // Kept in memory; the next write tries again.
                tracing::warn!(%error, "discord: cannot keep the gateway session");
                true
            }
        }
    }
}

/// One connection, resuming the session the lease keeps, if any.
async fn once(
    gateway: &Gateway,
    fence: &Fence,
    db: &Db,
    keeper: &Keeper,
    lost: &CancellationToken,
) {
    let kept = fence.cursor(db).await.ok().flatten();
    let mut session = Session::from_cursor(kept.as_deref());
    let mut progress = Leased {
        fence,
        db,
        keeper,
        kept,
    };
    match gateway.connect(&mut session, &mut progress, lost).await {
        Ended::Stopped => return,
        Ended::Dropped(why) => {
            tracing::info!(why, "discord: the gateway dropped; resuming");
            keeper.on(Event::Dropped);
        }
        Ended::Failed(why) => {
            tracing::warn!(why, "discord: the gateway failed");
            keeper.on(Event::Failed);
        }
        Ended::Fatal(why) => {
            tracing::error!(why, "discord: the gateway refused the bot");
            keeper.on(Event::Failed);
        }
    }
    // What the next connection resumes: nothing after a session Discord
    // invalidated.
    let cursor = session
        .as_ref()
        .map_or_else(String::new, Session::to_cursor);
    if progress.kept.as_deref() != Some(cursor.as_str()) {
        let _ = fence.set_cursor(db, &cursor).await;
    }
}
