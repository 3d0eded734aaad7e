//! Replies through ntfy itself (issue 48 item 1): Clarify subscribes to
//! each notify topic's reply topic (one replica at a time, under the
//! keeper's lease `ntfy:<reply topic URL>`), and each message's text, an
//! answer link's token, answers through the one claim as a tap on the
//! link would (channel `link`, client `ntfy`). The last message handled is
//! the lease's cursor, stored only after its reply went through the claim,
//! so a reconnect (`since=`), a restart or another replica reads on from
//! there: nothing is handled twice or lost.
//!
//! A reply that is no link's token (forged, oversized, another server's)
//! changes nothing and publishes nothing; nor does the same press again. A
//! reply to a question already answered by another, or closed, is told
//! so as a new notice on the notify topic.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use clarify_core::Channel;
use tokio_util::sync::CancellationToken;

use super::publish;
use super::reply::ReplyKey;
use super::stream::Stream;
use crate::channels::Channels;
use crate::channels::keeper::{Event, Fence, Keeper, LEASE, Statuses, hold};
use crate::db::Db;
use crate::lifecycle::{self, LINK_PREFIX, Lifecycle, LinkPage, LinkState, Resolving};
use crate::resume::Webhooks;

/// The longest reply read as a token (an answer link's is 57 characters).
const MAX_TOKEN: usize = 128;

/// Message ids remembered against a peer that sends one twice.
const RECENT: usize = 64;

/// Everything the subscriptions need; cheap to clone.
#[derive(Debug, Clone)]
pub struct Replies {
    /// The one claim.
    resolving: Resolving,
    /// The database the leases and cursors are kept in.
    db: Db,
    /// The guarded client every channel goes through.
    webhooks: Webhooks,
    /// The reply topics' key.
    key: ReplyKey,
    /// `Bearer …` for protected topics.
    authorization: Option<Arc<str>>,
    /// The lease's time to live.
    ttl: Duration,
}

impl Replies {
    /// Subscribes to the reply topic of each ntfy topic `channels`
    /// publishes to, answering through `resolving`, until `shutdown`.
    /// Its state is `statuses`' "ntfy replies"; each subscription is held
    /// under a lease of `ttl` ([`LEASE`] when `None`).
    pub fn start(
        channels: &Channels,
        lifecycle: &Lifecycle,
        statuses: &Statuses,
        ttl: Option<Duration>,
        shutdown: &CancellationToken,
    ) {
        let Some(key) = channels.ntfy_replies.clone() else {
            return;
        };
        let replies = Self {
            resolving: lifecycle.resolving.clone(),
            db: lifecycle.db().clone(),
            webhooks: channels.webhooks.clone(),
            key,
            authorization: channels
                .ntfy_token
                .as_deref()
                .map(|t| format!("Bearer {t}").into()),
            ttl: ttl.unwrap_or(LEASE),
        };
        let keeper = statuses.keeper("ntfy replies", "subscribed");
        replies.spawn(&channels.ntfy_topics(), &keeper, shutdown);
    }

    /// Subscribes to the reply topic of each notify topic in `topic_urls`,
    /// until `shutdown`.
    fn spawn(self, topic_urls: &[String], keeper: &Keeper, shutdown: &CancellationToken) {
        for topic_url in topic_urls {
            let Some(reply_url) = self.key.url(topic_url) else {
                continue;
            };
            let replies = self.clone();
            let topic_url = topic_url.clone();
            let keeper = keeper.clone();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let name = format!("ntfy:{reply_url}");
                let body = |fence: Fence, cancel: CancellationToken| {
                    let replies = replies.clone();
                    let (topic_url, reply_url) = (topic_url.clone(), reply_url.clone());
                    let keeper = keeper.clone();
                    async move {
                        replies
                            .subscription(&topic_url, &reply_url, &fence, &cancel, &keeper)
                            .await;
                    }
                };
                hold(
                    replies.db.clone(),
                    name,
                    replies.ttl,
                    keeper.clone(),
                    shutdown,
                    body,
                )
                .await;
            });
        }
    }

    /// One subscription, from the cursor on, until it drops, fails, or the
    /// lease is lost.
    async fn subscription(
        &self,
        topic_url: &str,
        reply_url: &str,
        fence: &Fence,
        cancel: &CancellationToken,
        keeper: &Keeper,
    ) {
        let Ok(last) = fence.cursor(&self.db).await else {
            keeper.on(Event::Failed);
            return;
        };
        let authorization = self.authorization.as_deref();
        let opened = tokio::select! {
            opened = Stream::open(&self.webhooks, reply_url, last.as_deref(), authorization) => opened,
            () = cancel.cancelled() => return,
        };
        let Ok(mut stream) = opened else {
            keeper.on(Event::Failed);
            return;
        };
        keeper.on(Event::Opened);
        let reply_topic = self.key.topic(topic_url);
        let mut recent: VecDeque<String> = last.iter().cloned().collect();
        loop {
            let line = tokio::select! {
                line = stream.next() => line,
                () = cancel.cancelled() => return,
            };
            let Some(line) = line else {
                keeper.on(Event::Dropped);
                return;
            };
            if line.event != "message" || line.topic != reply_topic || recent.contains(&line.id) {
                continue;
            }
            if let Err(error) = self.reply(topic_url, &line.message).await {
                // Not answered and not passed: read again after a reconnect.
                tracing::warn!(%error, "an ntfy reply could not be handled yet");
                keeper.on(Event::Failed);
                return;
            }
            match fence.set_cursor(&self.db, &line.id).await {
                Ok(true) => {}
                // Another replica holds the subscription now.
                Ok(false) => return,
                Err(error) => {
                    tracing::warn!(%error, "the ntfy replies' cursor could not be kept");
                    keeper.on(Event::Failed);
                    return;
                }
            }
            if recent.len() == RECENT {
                recent.pop_front();
            }
            recent.push_back(line.id);
        }
    }

    /// One reply, `text`, to the notify topic at `topic_url`.
    ///
    /// # Errors
    /// Database errors: the reply is to be read again.
    async fn reply(&self, topic_url: &str, text: &str) -> Result<(), lifecycle::Error> {
        let token = text.trim();
        if token.len() > MAX_TOKEN || !token.starts_with(LINK_PREFIX) {
            return Ok(());
        }
        let page = match self.resolving.answer_by_link(token).await {
            Ok(page) => page,
            Err(lifecycle::Error::Database(error)) => {
                return Err(lifecycle::Error::Database(error));
            }
            // Not a link (forged, used up, another server's), or a claim
            // that refused: nothing changed.
            Err(_) => return Ok(()),
        };
        if let Some(told) = told(&page) {
            self.tell(topic_url, &page.task, &told).await;
        }
        Ok(())
    }

    /// Publishes `told` of `task` to the notify topic at `topic_url`.
    async fn tell(&self, topic_url: &str, task: &str, told: &str) {
        let Ok((root, topic)) = super::split(topic_url) else {
            return;
        };
        let body = publish::told(task, told, &topic).to_string();
        let headers: Vec<(&'static str, &str)> = self
            .authorization
            .as_deref()
            .map(|a| ("authorization", a))
            .into_iter()
            .collect();
        let sent = self
            .webhooks
            .post(&root, body, &headers, "ntfy: too late")
            .await;
        if sent != crate::resume::Sent::Accepted {
            tracing::warn!("an ntfy reply's outcome could not be told");
        }
    }
}

/// What a late reply is told; `None` for one that won, or the same press
/// again (the winner was a tap on this very option through ntfy).
fn told(page: &LinkPage) -> Option<String> {
    match &page.state {
        LinkState::Open | LinkState::Answered { ours: true, .. } => None,
        LinkState::Answered {
            by,
            answer,
            ours: false,
        } => {
            let again = by
                .as_ref()
                .is_some_and(|by| by.channel == Channel::Link.as_str() && by.client == "ntfy")
                && *answer == page.option;
            if again {
                return None;
            }
            Some(match by {
                Some(by) => format!(
                    "Already answered by {} {}: {answer}",
                    by.user,
                    Channel::phrase(&by.channel)
                ),
                None => format!("Already answered: {answer}"),
            })
        }
        LinkState::Closed => Some("This question is no longer waiting for an answer.".to_owned()),
    }
}
