//! Telegram long polling (issue 48 items 1 and 2): a bot with no webhook
//! secret fetches its updates with `getUpdates`, so a server no one can
//! reach (a laptop behind NAT) still hears presses and replies.
//!
//! Telegram serves one poller per bot (a second is answered 409) and none
//! while a webhook is set: the poller runs under the keeper's lease, held
//! by one replica at a time, and first removes a webhook it finds, saying
//! so. The offset is the lease's cursor, advanced past an update only once
//! the update went through the claim: a restart, or another replica taking
//! over, starts after the last update handled, so none is handled twice and
//! none is lost (Telegram keeps an update until an offset above it is
//! asked).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{TelegramBot, handle, refused};
use crate::channels::Channels;
use crate::channels::keeper::{self, Event, Fence, Keeper, Link, Statuses};
use crate::db::Db;
use crate::lifecycle::{self as domain, Lifecycle, Resolving};
use crate::resume::{WEBHOOK_TIMEOUT, Webhooks};

/// How long one `getUpdates` waits for an update (Telegram allows 50 s and
/// advises a long one: fewer requests, an update delivered at once).
pub const LONG_POLL: Duration = Duration::from_secs(50);

/// How long a first poll held open counts as polling (see [`opened`]).
const HELD_OPEN: Duration = Duration::from_millis(500);

/// The lease's name: one poller per bot.
const LEASE: &str = "telegram";

/// The updates asked for: presses and replies, nothing else.
const ALLOWED: [&str; 2] = ["message", "callback_query"];

/// Why a round of polling ended before it was told to.
#[derive(Debug)]
enum Broke {
    /// The Bot API failed or refused (a 409: another poller, or a webhook
    /// set meanwhile); the client said why in the log.
    Api(&'static str),
    /// The database failed.
    Database(sqlx::Error),
}

impl From<sqlx::Error> for Broke {
    fn from(error: sqlx::Error) -> Self {
        Self::Database(error)
    }
}

/// What fetches a bot's updates and answers them; cheap to clone.
#[derive(Debug, Clone)]
pub struct Poller {
    bot: TelegramBot,
    webhooks: Webhooks,
    resolving: Resolving,
    db: Db,
}

impl Poller {
    /// The poller of the bot `channels` sends as, if one is configured.
    #[must_use]
    pub fn new(channels: &Channels, resolving: Resolving, db: Db) -> Option<Self> {
        Some(Self {
            bot: channels.telegram.clone()?,
            webhooks: channels.webhooks.clone(),
            resolving,
            db,
        })
    }

    /// Polls whenever this replica holds the lease (taken over within
    /// `lease` of its holder's death), until `shutdown`.
    pub async fn run(self, lease: Duration, keeper: Keeper, shutdown: CancellationToken) {
        let db = self.db.clone();
        let poller = Arc::new(self);
        let reporter = keeper.clone();
        keeper::hold(
            db,
            LEASE.to_owned(),
            lease,
            keeper,
            shutdown,
            move |fence, stop| {
                let (poller, keeper) = (poller.clone(), reporter.clone());
                async move {
                    if let Err(broke) = poller.poll(&fence, &keeper, &stop).await {
                        match broke {
                            Broke::Api(method) => {
                                tracing::warn!(method, "telegram: polling failed; trying again after a pause");
                            }
                            Broke::Database(error) => {
                                tracing::warn!(%error, "telegram: polling stopped on a database error");
                            }
                        }
                        // Backed off either way: a 409 (another poller,
                        // a webhook set meanwhile) lasts until someone acts.
                        keeper.on(Event::Failed);
                    }
                }
            },
        )
        .await;
    }

    /// Removes a webhook, then fetches and answers updates until `stop`
    /// (shutdown, or the lease lost) or a failure.
    async fn poll(
        &self,
        fence: &Fence,
        keeper: &Keeper,
        stop: &CancellationToken,
    ) -> Result<(), Broke> {
        let Some(()) = until(stop, self.unhook()).await.transpose()? else {
            return Ok(());
        };
        let mut offset = fence
            .cursor(&self.db)
            .await?
            .and_then(|c| c.parse::<i64>().ok());
        loop {
            let mut asked = json!({"timeout": LONG_POLL.as_secs(), "allowed_updates": ALLOWED});
            if let Some(offset) = offset {
                asked["offset"] = json!(offset);
            }
            let wait = LONG_POLL + WEBHOOK_TIMEOUT;
            let poll = self.call("getUpdates", &asked, wait);
            let polled = if keeper.link() == Link::Up {
                until(stop, poll).await
            } else {
                opened(poll, keeper, stop).await
            };
            let Some(updates) = polled else {
                return Ok(());
            };
            let updates = updates.map_err(|()| Broke::Api("getUpdates"))?;
            for update in updates.as_array().into_iter().flatten() {
                let Some(id) = update["update_id"].as_i64() else {
                    continue;
                };
                let tell = match handle(&self.resolving, update).await {
                    Ok(tell) => tell,
                    // Not advanced: the update is fetched again and retried.
                    Err(domain::Error::Database(error)) => return Err(Broke::Database(error)),
                    // Nothing a retry would change (the answer could not
                    // reach the agent, say): passed, its sender told why.
                    Err(other) => {
                        tracing::warn!(update = id, error = %other, "telegram: an update changed nothing");
                        refused(update, &other.to_string())
                    }
                };
                // Past the update before the person is told: a crash
                // between the two leaves them untold, never answered twice.
                if !fence.set_cursor(&self.db, &(id + 1).to_string()).await? {
                    return Ok(());
                }
                offset = Some(id + 1);
                if let Some(tell) = tell {
                    let _ = self.call(tell.method, &tell.body, WEBHOOK_TIMEOUT).await;
                }
            }
        }
    }

    /// Removes the bot's webhook if one is set (Telegram refuses to poll
    /// while it is), saying so: someone set it, and it stops receiving.
    async fn unhook(&self) -> Result<(), Broke> {
        let info = self
            .call("getWebhookInfo", &json!({}), WEBHOOK_TIMEOUT)
            .await
            .map_err(|()| Broke::Api("getWebhookInfo"))?;
        let url = info["url"].as_str().unwrap_or_default();
        if url.is_empty() {
            return Ok(());
        }
        // The host only: a webhook's path may hold a secret.
        let host = reqwest::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        self.call(
            "deleteWebhook",
            &json!({"drop_pending_updates": false}),
            WEBHOOK_TIMEOUT,
        )
        .await
        .map_err(|()| Broke::Api("deleteWebhook"))?;
        tracing::warn!(
            webhook_host = host,
            "telegram: removed the bot's webhook to poll for updates (Telegram sends them to one or \
             the other); start with --telegram-webhook-secret to receive them at a webhook instead"
        );
        Ok(())
    }

    /// Calls Bot API `method` with `body`, given `wait` to answer: its
    /// `result` when it answers `ok`.
    async fn call(&self, method: &'static str, body: &Value, wait: Duration) -> Result<Value, ()> {
        let url = self.bot.method_url(method);
        let answer = self
            .webhooks
            .call_within(&url, body.to_string(), &[], method, wait)
            .await
            .map_err(|_| ())?;
        if answer["ok"] == true {
            Ok(answer["result"].clone())
        } else {
            Err(())
        }
    }
}

/// Starts polling for the bot `channels` sends as, if one is configured,
/// reported as "telegram: … (polling)", under a lease of `lease`.
pub fn start(
    channels: &Channels,
    lifecycle: &Lifecycle,
    statuses: &Statuses,
    lease: Duration,
    shutdown: &CancellationToken,
) {
    let Some(poller) = Poller::new(
        channels,
        lifecycle.resolving.clone(),
        lifecycle.db().clone(),
    ) else {
        return;
    };
    let keeper = statuses.keeper("telegram", "polling");
    tokio::spawn(poller.run(lease, keeper, shutdown.clone()));
}

/// `poll`'s answer, the link reported up once Telegram answered or held
/// the poll open [`HELD_OPEN`]: a long poll answers only when something
/// happens, while a refusal (a 409 included) comes at once, so one that
/// keeps coming backs off longer each time rather than every second.
async fn opened(
    poll: impl Future<Output = Result<Value, ()>>,
    keeper: &Keeper,
    stop: &CancellationToken,
) -> Option<Result<Value, ()>> {
    tokio::pin!(poll);
    tokio::select! {
        done = &mut poll => {
            if done.is_ok() {
                keeper.on(Event::Opened);
            }
            return Some(done);
        }
        () = tokio::time::sleep(HELD_OPEN) => {
            keeper.on(Event::Opened);
        }
        () = stop.cancelled() => return None,
    }
    until(stop, poll).await
}

/// `work`'s output, or `None` once `stop` is cancelled (at once, even in
/// the middle of a long poll).
async fn until<T>(stop: &CancellationToken, work: impl Future<Output = T>) -> Option<T> {
    tokio::select! {
        done = work => Some(done),
        () = stop.cancelled() => None,
    }
}
