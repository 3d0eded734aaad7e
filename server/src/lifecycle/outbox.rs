//! Queuing notices (issue 18): the people who answer are told when a
//! bundle starts waiting, is resolved, expires or is cancelled, and
//! reminded once when 80% of its time to expiry has passed. Targets are the
//! server's (`--notify-webhook`, ntfy topics, chats) and the bundle's
//! workspace's own (set by its owner).
//!
//! A change queues one outbox row per target (`db::notifications`), made
//! after the change is durable and off the path of the request that made
//! it, so notifying never blocks or fails a claim. The replica that made
//! the change queues it; the key `pending_id:event`, unique per target,
//! keeps a notice queued once however many try. Sending them is
//! `crate::channels`' (issue 45: the adapters left the domain), which the
//! domain reaches only through the [`Outbound`] port the composition root
//! hands it.

use std::time::Duration;

use clarify_core::EventKind;
use clarify_core::api::{MessageEvent, Notice, NoticeKind};

use super::notice::change_of;
use super::{Resolving, Result, Shared};
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Bundle};
use crate::db::notifications::{self, Outgoing};
use crate::ids::new_id;

/// How long a notice is retried before it is given up.
pub const NOTIFY_FOR: Duration = Duration::from_secs(10 * 60);

/// What the domain knows of the ways a notice leaves: which targets a
/// change goes to, and how to tell the sender that one is due. The
/// channels implement it; the domain never names a channel.
pub trait Outbound: std::fmt::Debug + Send + Sync {
    /// The server's own targets, told of every change.
    fn targets(&self) -> &[String];
    /// The server's public URL, without a trailing `/`: where a notice's
    /// links point.
    fn base(&self) -> &str;
    /// The target for a workspace's own Slack channel; `None` when this
    /// server posts to no Slack.
    fn slack_target(&self, channel: &str) -> Option<String>;
    /// The target for a workspace's own Discord channel; `None` when this
    /// server has no Discord bot (issue 48).
    fn discord_target(&self, channel: &str) -> Option<String>;
    /// The `client` an answer through a link carried to `target` records.
    fn client_of(&self, target: &str) -> String;
    /// A notice due now was queued: the sender need not wait for its next
    /// look.
    fn queued(&self);
}

/// No channels given (a service the composition root did not wire): the
/// workspaces' webhooks are still queued, and nothing rings.
#[derive(Debug)]
pub(super) struct Unset;

impl Outbound for Unset {
    fn targets(&self) -> &[String] {
        &[]
    }

    fn base(&self) -> &str {
        "http://localhost:7420"
    }

    fn slack_target(&self, _: &str) -> Option<String> {
        None
    }

    fn discord_target(&self, _: &str) -> Option<String> {
        None
    }

    fn client_of(&self, _: &str) -> String {
        "webhook".to_owned()
    }

    fn queued(&self) {}
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
        let mut targets = self.notifications.targets().to_vec();
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
        let notice = self
            .notice(&bundle, change, self.notifications.base())
            .await?;
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
            self.notifications.queued();
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
        let base = self.notifications.base();
        let mut tx = self.db.begin_write().await?;
        let mut due = false;
        for target in targets {
            let client = self.notifications.client_of(target);
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
