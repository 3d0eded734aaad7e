//! Delivering the notification outbox: every replica looks for due rows,
//! claims each attempt (compare-and-set on `next_at`, so one replica sends
//! it), POSTs it with its `Idempotency-Key`, and then marks it delivered or
//! due again with backoff, until its deadline. A replica that dies mid-send
//! leaves a lease that ends: the row is sent again (at-least-once; the key
//! lets the receiver keep it once). Started by the composition root.

mod owners;
mod targets;

pub use owners::PER_OWNER;
pub use targets::PER_TARGET;

use std::time::{Duration, Instant};

use clarify_core::api::{Notice, NoticeKind};

use super::{Channels, chat, ntfy, webhook};
use crate::clock::{micros, now_micros};
use crate::db::Db;
use crate::db::clarification as repo;
use crate::db::notifications::{self, Outgoing};
use crate::resume::{Sent, WEBHOOK_TIMEOUT};

/// How often each replica looks for due rows when nothing rang.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long a claimed attempt is the claimer's: the request's own limit
/// and a margin.
const LEASE: Duration = Duration::from_secs(WEBHOOK_TIMEOUT.as_secs() + 5);

/// Rows read per look.
const PER_LOOK: i64 = 64;

/// Ended rows are kept this long (to see what was sent), then forgotten.
const KEEP_ENDED: Duration = Duration::from_secs(24 * 3600);

/// How often ended rows are forgotten.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// This replica's sender of the outbox; cheap to clone.
#[derive(Debug, Clone)]
pub struct Sender {
    db: Db,
    channels: Channels,
    /// Sends in flight on this replica to workspaces' webhooks, a share
    /// per owner (the operator's own targets are not counted: each
    /// workspace could fill it, and the operator's notices must still go
    /// out).
    sending: owners::Owners,
    /// Each target's sends in flight.
    busy: targets::Targets,
    /// Each send counted by channel and outcome (issue 49 item 1).
    measure: crate::measure::Measure,
}

impl Sender {
    /// A sender of `db`'s outbox through `channels`.
    #[must_use]
    pub fn new(db: Db, channels: Channels, measure: crate::measure::Measure) -> Self {
        Self {
            db,
            channels,
            measure,
            sending: owners::Owners::default(),
            busy: targets::Targets::default(),
        }
    }

    /// Delivers due notices until `shutdown`.
    pub async fn run(self, shutdown: tokio_util::sync::CancellationToken) {
        let mut pruned: Option<Instant> = None;
        loop {
            if let Err(error) = self.send_due().await {
                tracing::warn!(%error, "notification delivery failed; it runs again shortly");
            }
            if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned = Some(Instant::now());
                let before = now_micros() - micros(KEEP_ENDED);
                if let Err(error) = self
                    .db
                    .write(async |c| notifications::prune(c, before).await)
                    .await
                {
                    tracing::warn!(%error, "ended notifications not pruned");
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.channels.wake.notified() => {}
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
        }
    }

    /// Claims and starts every due row that its target has room for:
    /// target by target, the longest waiting first, each at most
    /// [`PER_TARGET`] at once (issue 26), so a slow target holds
    /// only its own places, and a workspace's within its owner's share
    /// (`owners.rs`), so a slow owner holds only theirs. A send that ends
    /// rings the wake, and what waited for its place goes then.
    async fn send_due(&self) -> sqlx::Result<()> {
        let wake = &self.channels.wake;
        loop {
            // Busy targets come back in the answer too: ask for that many
            // more, so that they never crowd out the others.
            let busy = self.busy.busy();
            let limit = PER_LOOK + i64::try_from(busy).unwrap_or(i64::MAX);
            let targets = notifications::due_targets(self.db.pool(), now_micros(), limit).await?;
            let mut started = false;
            for target in &targets {
                let room = self.busy.room(target);
                if room == 0 {
                    continue;
                }
                let room = i64::try_from(room).unwrap_or(1);
                let rows =
                    notifications::due_for(self.db.pool(), target, now_micros(), room).await?;
                for row in rows {
                    let operators = self.channels.targets.contains(&row.target);
                    let pooled = if operators {
                        None
                    } else {
                        match self.sending.take(&row.owner_id, wake) {
                            Some(share) => Some(share),
                            // This owner's share is taken (a send that
                            // ends rings); the next target may be
                            // another owner's (issue 45 item 7-P5).
                            None => break,
                        }
                    };
                    let Some(place) = self.busy.take(target, wake) else {
                        break;
                    };
                    let now = now_micros();
                    if !self
                        .db
                        .write(async |c| {
                            notifications::claim(c, &row, now + micros(LEASE), now).await
                        })
                        .await?
                    {
                        continue;
                    }
                    started = true;
                    let me = self.clone();
                    tokio::spawn(async move {
                        if let Err(error) = me.send_one(&row).await {
                            tracing::warn!(id = row.id, %error, "notification left for a retry");
                        }
                        drop((place, pooled));
                    });
                }
            }
            // Another look only while there may be more than one read.
            let full = targets.len() == usize::try_from(limit).unwrap_or(usize::MAX);
            if !(started && full) {
                return Ok(());
            }
        }
    }

    /// One attempt at `row` (already claimed), through the channel its
    /// target names.
    async fn send_one(&self, row: &Outgoing) -> sqlx::Result<()> {
        // A reminder of a bundle no longer waiting would tell nothing true.
        if row.event == NoticeKind::Reminder.as_str()
            && !repo::is_active(self.db.pool(), &row.pending_id).await?
        {
            return self.finish(row, "dropped").await;
        }
        let what = format!("{} notice of {}", row.event, row.pending_id);
        let channels = &self.channels;
        let sent = if let Some(chat) = chat::chat_of(&row.target) {
            let Ok(notice) = serde_json::from_str::<Notice>(&row.body) else {
                return self.finish(row, "failed").await;
            };
            channels.send_to_chat(&self.db, row, chat, &notice).await?
        } else if let Some(topic_url) = ntfy::topic_url(&row.target) {
            let token = channels.ntfy_token.as_deref();
            let key = channels.ntfy_replies.as_ref();
            let sent = ntfy::send(&channels.webhooks, row, topic_url, token, key, &what).await;
            let Some(sent) = sent else {
                tracing::warn!(what, "an ntfy notice that cannot be sent");
                return self.finish(row, "failed").await;
            };
            sent
        } else {
            webhook::send(&channels.webhooks, row, &what).await
        };
        self.sent(row, sent, &what).await
    }

    /// Ends `row` as `state` (delivered, failed, dropped).
    async fn finish(&self, row: &Outgoing, state: &str) -> sqlx::Result<()> {
        let now = now_micros();
        self.db
            .write(async |c| notifications::finish(c, &row.id, state, now).await)
            .await
    }

    /// Records how an attempt at `row` went: delivered, failed for good, or
    /// due again with backoff until its deadline.
    async fn sent(&self, row: &Outgoing, sent: Sent, what: &str) -> sqlx::Result<()> {
        let now = now_micros();
        let outcome = match sent {
            Sent::Accepted => "sent",
            Sent::Refused => "refused",
            Sent::Failed => "failed",
        };
        let labels = [
            ("channel", super::kind_of(&row.target).to_owned()),
            ("outcome", outcome.to_owned()),
        ];
        self.measure.count("clarify_notices_total", &labels);
        match sent {
            Sent::Accepted => self.finish(row, "delivered").await,
            Sent::Refused => self.finish(row, "failed").await,
            Sent::Failed => {
                let delay = self.channels.backoff(row.attempts + 1);
                let next_at = now + micros(delay);
                if next_at > row.deadline {
                    tracing::warn!(what, attempts = row.attempts + 1, "notice given up");
                    return self.finish(row, "failed").await;
                }
                self.db
                    .write(async |c| notifications::retry_at(c, &row.id, next_at, now).await)
                    .await?;
                let wake = self.channels.wake.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    wake.notify_one();
                });
                Ok(())
            }
        }
    }
}
