//! Operator webhooks (issue 18): the people who answer are told when a
//! bundle starts waiting, is resolved, expires or is cancelled, and
//! reminded once when 80% of its time to expiry has passed. Targets are the
//! server's (`--notify-webhook`) and the bundle's workspace's own (set by
//! its owner).
//!
//! A change queues one outbox row per target (`db::notifications`), made
//! after the change is durable and off the path of the request that made
//! it, so notifying never blocks or fails a claim. The replica that made
//! the change queues it; the key `pending_id:event`, unique per target,
//! keeps a notice queued once however many try. Delivery is [`send`].

mod chat;
pub mod ntfy;
mod owners;
mod send;
pub mod slack;
mod targets;
pub mod telegram;

pub use owners::PER_OWNER;
pub use targets::PER_TARGET;

use std::sync::Arc;
use std::time::Duration;

use clarify_core::EventKind;
use clarify_core::api::{MessageEvent, Notice, NoticeKind};

use super::notice::change_of;
use super::{Resolving, Result, Shared};
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Bundle};
use crate::db::notifications::{self, Outgoing};
use crate::ids::new_id;
use crate::resume::Webhooks;

/// How long a notice is retried before it is given up.
pub const NOTIFY_FOR: Duration = Duration::from_secs(10 * 60);

/// The first retry's delay; each next one doubles, up to 60 times this.
pub const FIRST_RETRY: Duration = Duration::from_secs(2);

/// Where notices go and how they are sent; cheap to clone.
#[derive(Debug, Clone)]
pub struct Notifications {
    targets: Arc<[String]>,
    base: Arc<str>,
    first_retry: Duration,
    webhooks: Option<Webhooks>,
    /// Rung when this replica queues something due now, or a retry comes
    /// due, so delivery need not wait for its next look.
    wake: Arc<tokio::sync::Notify>,
    /// Sends in flight on this replica to workspaces' webhooks, a share
    /// per owner (the operator's own targets are not counted: each
    /// workspace could fill it, and the operator's notices must still go
    /// out).
    sending: owners::Owners,
    /// Each target's sends in flight.
    busy: targets::Targets,
    /// The access token ntfy topics are published with, if any.
    ntfy_token: Option<Arc<str>>,
    /// The Slack app channels are posted to as, if any.
    slack: Option<slack::SlackApp>,
    /// The Telegram bot chats are sent to as, if any.
    telegram: Option<telegram::TelegramBot>,
}

impl Default for Notifications {
    fn default() -> Self {
        Self::new(Vec::new(), "http://localhost:7420", None)
    }
}

impl Notifications {
    /// Notices to `targets` (besides each workspace's own), with links
    /// under `base` (the server's public URL), first retried after
    /// `first_retry` ([`FIRST_RETRY`] when `None`).
    #[must_use]
    pub fn new(targets: Vec<String>, base: &str, first_retry: Option<Duration>) -> Self {
        Self {
            targets: targets.into(),
            base: base.trim_end_matches('/').into(),
            first_retry: first_retry.unwrap_or(FIRST_RETRY),
            webhooks: None,
            wake: Arc::default(),
            sending: owners::Owners::default(),
            busy: targets::Targets::default(),
            ntfy_token: None,
            slack: None,
            telegram: None,
        }
    }

    /// Whether `slack:` targets can be posted to (a Slack app is set).
    #[must_use]
    pub fn posts_to_slack(&self) -> bool {
        self.slack.is_some()
    }

    /// The same, posting `slack:` targets as `slack` and sending
    /// `telegram:` ones as `telegram`.
    #[must_use]
    pub fn with_chats(
        mut self,
        slack: Option<slack::SlackApp>,
        telegram: Option<telegram::TelegramBot>,
    ) -> Self {
        self.slack = slack;
        self.telegram = telegram;
        self
    }

    /// The same, publishing to ntfy topics with `token` (`Bearer`).
    #[must_use]
    pub fn with_ntfy_token(mut self, token: Option<&str>) -> Self {
        self.ntfy_token = token.filter(|t| !t.is_empty()).map(Into::into);
        self
    }

    /// The same, sending through `webhooks` (the resume webhooks' client
    /// and network policy).
    #[must_use]
    pub(super) fn sending_through(mut self, webhooks: Webhooks) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// The delay before attempt `attempts + 1`, after `attempts` failed.
    fn backoff(&self, attempts: i64) -> Duration {
        let doublings = u32::try_from(attempts.clamp(1, 7) - 1).unwrap_or(0);
        (self.first_retry * 2u32.pow(doublings)).min(self.first_retry * 60)
    }
}

impl Shared {
    /// Queues the notices an event (`action`, `payload`) makes, if any, for the server's targets
    /// and `own` (the workspace's webhook and Slack channel), in the background: the change is
    /// already durable, and whoever made it is not kept waiting. With no
    /// target at all, nothing happens.
    pub(super) fn notify_change(&self, action: EventKind, payload: &MessageEvent, own: &[String]) {
        let Some((pending_id, change)) = change_of(action, payload) else {
            return;
        };
        let mut targets = self.notifications.targets.to_vec();
        targets.extend(own.iter().cloned());
        if targets.is_empty() {
            return;
        }
        let me = self.clone();
        tokio::spawn(async move {
            if let Err(error) = me.queue_notices(&targets, &pending_id, change).await {
                tracing::warn!(pending_id, change = change.as_str(), %error, "notices not queued");
            }
        });
    }

    async fn queue_notices(
        &self,
        targets: &[String],
        pending_id: &str,
        change: NoticeKind,
    ) -> Result<()> {
        let Some(bundle) = repo::load(self.db.pool(), pending_id).await? else {
            return Ok(());
        };
        let now = now_micros();
        let base = self.notifications.base.clone();
        let notice = self.notice(&bundle, change, &base).await?;
        let deadline = now.saturating_add(crate::clock::micros(NOTIFY_FOR));
        let mut notices = vec![(notice.clone(), now, deadline)];
        if let (true, Some((remind_at, expires_at))) =
            (change == NoticeKind::Waiting, reminder_at(&bundle))
        {
            let mut reminder = notice;
            reminder.event = NoticeKind::Reminder;
            reminder.answered_by = None;
            reminder.text = reminder.describe();
            notices.push((reminder, remind_at, expires_at));
        }
        if self.queue(targets, &bundle, &notices, now).await? {
            self.notifications.wake.notify_one();
        }
        Ok(())
    }

    /// Each of `notices` (with when it is due and given up) queued once
    /// per target, with that target's own answer links, in one
    /// transaction; whether any new row is due now.
    async fn queue(
        &self,
        targets: &[String],
        bundle: &Bundle,
        notices: &[(Notice, i64, i64)],
        now: i64,
    ) -> Result<bool> {
        let base = &self.notifications.base;
        let mut tx = self.db.begin_write().await?;
        let mut due = false;
        for target in targets {
            let client = super::client_of(target);
            let mut links = Vec::new();
            for (notice, next_at, deadline) in notices {
                let mut notice = notice.clone();
                // The waiting notice and its reminder share one set of links.
                if links.is_empty() {
                    Resolving::add_links(&mut tx, bundle, &mut notice, base, &client).await?;
                    links = notice.actions.clone();
                } else {
                    notice.actions = links.clone();
                }
                let row = Outgoing {
                    id: new_id(),
                    target: target.clone(),
                    ..row(bundle, notice.event, json(&notice), *next_at, *deadline)
                };
                let new = notifications::enqueue(&mut tx, &row, now).await?;
                due |= new && row.next_at <= now;
            }
        }
        tx.commit().await?;
        Ok(due)
    }
}

/// A row (not yet for any target) telling `event` about `bundle`.
fn row(bundle: &Bundle, event: NoticeKind, body: String, next_at: i64, deadline: i64) -> Outgoing {
    let pending_id = bundle.pending_id();
    Outgoing {
        id: String::new(),
        target: String::new(),
        event_key: format!("{pending_id}:{}", event.as_str()),
        pending_id: pending_id.to_owned(),
        event: event.as_str().to_owned(),
        body,
        attempts: 0,
        next_at,
        deadline,
        owner_id: String::new(),
    }
}

/// A notice's body. A struct of strings always serializes.
fn json(notice: &Notice) -> String {
    serde_json::to_string(notice).unwrap_or_default()
}

/// When a bundle that expires is reminded of (80% of the way from its ask
/// to its expiry), and when it expires; `None` when it never does.
fn reminder_at(bundle: &Bundle) -> Option<(i64, i64)> {
    let expires_at = bundle.expires_at()?;
    let asked = bundle.created_at();
    Some((asked + (expires_at - asked) / 5 * 4, expires_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_from_the_first_delay_up_to_sixty_times_it() {
        let n = Notifications::new(Vec::new(), "http://x/", None);
        let delays: Vec<u64> = (1..=9).map(|a| n.backoff(a).as_secs()).collect();
        assert_eq!(delays, [2, 4, 8, 16, 32, 64, 120, 120, 120]);
        // About ten minutes of tries fit in NOTIFY_FOR: no notice is given
        // up after a short outage.
        let total: u64 = delays.iter().sum();
        assert!(total >= 480 && total <= NOTIFY_FOR.as_secs(), "{total}");
        assert_eq!(&*n.base, "http://x");
    }
}
