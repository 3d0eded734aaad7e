//! Several replicas on one PostgreSQL database: what one replica knows only
//! in memory (which agents are blocked where, who must be woken, which
//! browsers must hear of a change) reaches the others. On SQLite there is
//! one process and every method here does nothing.
//!
//! - Wakes and browser events travel as rows of `replica_messages`,
//!   announced by `LISTEN/NOTIFY` ([`relay`]).
//! - Attachment (R7: is the agent waiting, so an answer is handed over live
//!   rather than resuming it?) is a lease in `clarification_attachments`,
//!   renewed by the replica holding the waiter.
//! - MCP sessions live in `mcp_sessions` (`crate::mcp`'s session store).
//!
//! The database stays the authority (R6): a lost message delays a live
//! delivery, it never loses or duplicates an answer.

mod relay;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::clock::{micros, now_micros};
use crate::db::{Db, replicas};
use crate::events::{Event, Events, Relay};
use crate::ids::new_id;
use crate::waiters::{GRACE, Waiters, Wake};

/// How often a replica renews the attachments it holds (well inside
/// [`GRACE`], so a lease never lapses while its agent waits).
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// How many messages may wait to be relayed; beyond that (the database is
/// unreachable) new ones are dropped rather than eating memory: they are
/// live hints, the database keeps the truth.
const QUEUE: usize = 4096;

/// How long relayed messages and lapsed attachments are kept.
const KEEP: Duration = Duration::from_secs(300);

/// How long an MCP session can be resumed on another replica (a client
/// whose session is gone initializes a new one).
const KEEP_MCP_SESSIONS: Duration = Duration::from_secs(24 * 3600);

/// One replica's message to the others.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Relayed {
    /// A browser event to publish.
    Event(Event),
    /// A waiter to wake.
    Wake {
        /// The bundle.
        pending_id: String,
        /// What happened to it.
        wake: Wake,
    },
}

/// This replica's link to the others; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    link: Option<Link>,
}

#[derive(Debug, Clone)]
struct Link {
    db: Db,
    outbound: Outbound,
}

/// The queue of messages for the other replicas.
#[derive(Debug, Clone)]
pub struct Outbound(mpsc::Sender<Relayed>);

impl Outbound {
    /// Queues `message` for the other replicas, without waiting.
    pub fn relay(&self, message: Relayed) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.0.try_send(message) {
            tracing::warn!("too many messages waiting for the other replicas; dropped one");
        }
    }
}

impl Relay for Outbound {
    fn relay(&self, event: Event) {
        Outbound::relay(self, Relayed::Event(event));
    }
}

impl Cluster {
    /// Joins the replicas sharing `db` (nothing to join on SQLite): listens
    /// for their messages before returning, so none sent afterwards is
    /// missed, and keeps listening and renewing attachments until
    /// `shutdown`; relays until the last handle to this cluster is dropped.
    ///
    /// # Errors
    /// When the listener cannot connect.
    pub async fn join(
        db: &Db,
        waiters: &Waiters,
        events: &Events,
        measure: &crate::measure::Measure,
        shutdown: &CancellationToken,
    ) -> sqlx::Result<Self> {
        if !db.backend().shared() {
            return Ok(Self::default());
        }
        let replica: Arc<str> = new_id().into();
        let listener = relay::listen(db).await?;
        let (outbound, queue) = mpsc::channel(QUEUE);
        tokio::spawn(relay::receive(
            listener,
            db.clone(),
            replica.clone(),
            (waiters.clone(), events.clone(), measure.clone()),
            shutdown.clone(),
        ));
        tokio::spawn(relay::send(db.clone(), replica, queue));
        tokio::spawn(renew_attachments(
            db.clone(),
            waiters.clone(),
            shutdown.clone(),
        ));
        Ok(Self {
            link: Some(Link {
                db: db.clone(),
                outbound: Outbound(outbound),
            }),
        })
    }

    /// Whether other replicas may exist (PostgreSQL), whose wakes arrive
    /// through the relay, a moment after their writes.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.link.is_some()
    }

    /// Where [`Events`] sends what the other replicas must also publish.
    #[must_use]
    pub fn outbound(&self) -> Option<std::sync::Arc<dyn Relay>> {
        self.link
            .as_ref()
            .map(|l| std::sync::Arc::new(l.outbound.clone()) as std::sync::Arc<dyn Relay>)
    }

    /// Wakes the waiters on `pending_id` held by the other replicas.
    pub fn wake(&self, pending_id: &str, wake: &Wake) {
        if let Some(link) = &self.link {
            link.outbound.relay(Relayed::Wake {
                pending_id: pending_id.to_owned(),
                wake: wake.clone(),
            });
        }
    }

    /// Announces that an agent is attached to `pending_id` for [`GRACE`]
    /// from now, through `db` (the pool, or the transaction creating the
    /// bundle, so no replica ever sees the bundle without it).
    ///
    /// # Errors
    /// Database errors.
    pub async fn attach(
        &self,
        db: impl sqlx::AnyExecutor<'_>,
        pending_id: &str,
    ) -> sqlx::Result<()> {
        if self.link.is_none() {
            return Ok(());
        }
        replicas::attach(db, pending_id, now_micros() + micros(GRACE)).await
    }

    /// Whether an agent is attached to `pending_id` through some replica.
    ///
    /// # Errors
    /// Database errors.
    pub async fn is_attached(&self, pending_id: &str) -> sqlx::Result<bool> {
        match &self.link {
            Some(link) => replicas::is_attached(link.db.pool(), pending_id, now_micros()).await,
            None => Ok(false),
        }
    }
}

/// Keeps the leases of the agents attached here ahead of the clock, and
/// forgets what every replica has long had.
async fn renew_attachments(db: Db, waiters: Waiters, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(HEARTBEAT);
    let mut ticks: u64 = 0;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = now_micros();
        let mut leases: Vec<(String, i64)> = waiters
            .attached_for()
            .into_iter()
            .map(|(pending_id, left)| (pending_id, now + micros(left)))
            .collect();
        // In one order on every replica, so two renewing the same bundles
        // never deadlock.
        leases.sort();
        if let Err(error) = replicas::attach_all(&db, &leases).await {
            tracing::warn!(%error, "could not renew attachments");
        }
        ticks += 1;
        if ticks.is_multiple_of(12)
            && let Err(error) =
                replicas::forget(&db, now - micros(KEEP), now - micros(KEEP_MCP_SESSIONS)).await
        {
            tracing::warn!(%error, "could not forget old replica messages");
        }
    }
}
