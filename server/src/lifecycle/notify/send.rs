//! Delivering the notification outbox: every replica looks for due rows,
//! claims each attempt (compare-and-set on `next_at`, so one replica sends
//! it), POSTs it with its `Idempotency-Key`, and then marks it delivered or
//! due again with backoff, until its deadline. A replica that dies mid-send
//! leaves a lease that ends: the row is sent again (at-least-once; the key
//! lets the receiver keep it once).

use std::time::{Duration, Instant};

use super::super::{Result, Shared, Sweeps};
use crate::clock::{micros, now_micros};
use crate::db::clarification as repo;
use crate::db::notifications::{self, Outgoing};
use crate::resume::{Sent, WEBHOOK_TIMEOUT};
use clarify_core::api::{Notice, NoticeKind};

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

impl Sweeps {
    /// Delivers due notices until `shutdown`.
    pub async fn deliver_notifications(self, shutdown: tokio_util::sync::CancellationToken) {
        self.shared.deliver_notifications(shutdown).await;
    }
}

impl Shared {
    async fn deliver_notifications(self, shutdown: tokio_util::sync::CancellationToken) {
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
                () = self.notifications.wake.notified() => {}
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
        }
    }

    /// Claims and starts every due row that its target has room for:
    /// target by target, the longest waiting first, each at most
    /// [`super::PER_TARGET`] at once (issue 26), so a slow target holds
    /// only its own places, and a workspace's within its owner's share
    /// (`owners.rs`), so a slow owner holds only theirs. A send that ends
    /// rings the wake, and what waited for its place goes then.
    async fn send_due(&self) -> Result<()> {
        let Some(webhooks) = self.notifications.webhooks.clone() else {
            return Ok(());
        };
        let notifications = &self.notifications;
        loop {
            // Busy targets come back in the answer too: ask for that many
            // more, so that they never crowd out the others.
            let busy = notifications.busy.busy();
            let limit = PER_LOOK + i64::try_from(busy).unwrap_or(i64::MAX);
            let targets = notifications::due_targets(self.db.pool(), now_micros(), limit).await?;
            let mut started = false;
            for target in &targets {
                let room = notifications.busy.room(target);
                if room == 0 {
                    continue;
                }
                let room = i64::try_from(room).unwrap_or(1);
                let rows =
                    notifications::due_for(self.db.pool(), target, now_micros(), room).await?;
                for row in rows {
                    let operators = notifications.targets.contains(&row.target);
                    let pooled = if operators {
                        None
                    } else {
                        match notifications
                            .sending
                            .take(&row.owner_id, &notifications.wake)
                        {
                            Some(share) => Some(share),
                            // This owner's share is taken (a send that
                            // ends rings); the next target may be
                            // another owner's (issue 45 item 7-P5).
                            None => break,
                        }
                    };
                    let Some(place) = notifications.busy.take(target, &notifications.wake) else {
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
                    let (me, webhooks) = (self.clone(), webhooks.clone());
                    tokio::spawn(async move {
                        if let Err(error) = me.send_one(&webhooks, &row).await {
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

    /// One attempt at `row` (already claimed).
    async fn send_one(&self, webhooks: &super::Webhooks, row: &Outgoing) -> Result<()> {
        let pool = self.db.pool();
        // A reminder of a bundle no longer waiting would tell nothing true.
        if row.event == NoticeKind::Reminder.as_str()
            && !repo::is_active(pool, &row.pending_id).await?
        {
            return Ok(self
                .db
                .write(async |c| notifications::finish(c, &row.id, "dropped", now_micros()).await)
                .await?);
        }
        let what = format!("{} notice of {}", row.event, row.pending_id);
        let mut headers = vec![
            ("idempotency-key", row.event_key.as_str()),
            ("user-agent", concat!("clarify/", env!("CARGO_PKG_VERSION"))),
        ];
        if let Some(chat) = super::chat::chat_of(&row.target) {
            let Ok(notice) = serde_json::from_str::<Notice>(&row.body) else {
                return Ok(self
                    .db
                    .write(async |c| {
                        notifications::finish(c, &row.id, "failed", now_micros()).await
                    })
                    .await?);
            };
            let sent = self.send_to_chat(webhooks, row, chat, &notice).await?;
            return self.sent(row, sent, &what).await;
        }
        let bearer;
        let (url, body) = match super::ntfy::topic_url(&row.target) {
            None => (row.target.clone(), row.body.clone()),
            Some(topic_url) => {
                let (Ok((root, topic)), Ok(notice)) = (
                    super::ntfy::split(topic_url),
                    serde_json::from_str::<Notice>(&row.body),
                ) else {
                    tracing::warn!(what, "an ntfy notice that cannot be sent");
                    return Ok(self
                        .db
                        .write(async |c| {
                            notifications::finish(c, &row.id, "failed", now_micros()).await
                        })
                        .await?);
                };
                if let Some(token) = &self.notifications.ntfy_token {
                    bearer = format!("Bearer {token}");
                    headers.push(("authorization", bearer.as_str()));
                }
                (root, super::ntfy::publish(&notice, &topic).to_string())
            }
        };
        let sent = webhooks.post(&url, body, &headers, &what).await;
        self.sent(row, sent, &what).await
    }

    /// Records how an attempt at `row` went: delivered, failed for good, or
    /// due again with backoff until its deadline.
    async fn sent(&self, row: &Outgoing, sent: Sent, what: &str) -> Result<()> {
        let now = now_micros();
        match sent {
            Sent::Accepted => {
                self.db
                    .write(async |c| notifications::finish(c, &row.id, "delivered", now).await)
                    .await?;
            }
            Sent::Refused => {
                self.db
                    .write(async |c| notifications::finish(c, &row.id, "failed", now).await)
                    .await?;
            }
            Sent::Failed => {
                let delay = self.notifications.backoff(row.attempts + 1);
                let next_at = now + micros(delay);
                if next_at > row.deadline {
                    tracing::warn!(what, attempts = row.attempts + 1, "notice given up");
                    self.db
                        .write(async |c| notifications::finish(c, &row.id, "failed", now).await)
                        .await?;
                } else {
                    self.db
                        .write(async |c| notifications::retry_at(c, &row.id, next_at, now).await)
                        .await?;
                    let wake = self.notifications.wake.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        wake.notify_one();
                    });
                }
            }
        }
        Ok(())
    }
}
