//! The clarification lifecycle: the domain's use cases, one file each —
//! asking ([`ask`]), resolving and delivering ([`resolve`]), reading
//! ([`view`]), waiting ([`wait`]), closing ([`close`]), session and turn
//! transitions ([`session`]), R6 reconciliation ([`reconcile`]) — and the
//! read side ([`discovery`], [`projection`]).
//!
//! The database decides; this layer orders the steps. It knows nothing of
//! HTTP or MCP: it returns its own [`Error`] and outcome types, which the
//! adapters in `crate::http` and `crate::mcp` map to their wire.

mod agent_task;
mod alike;
mod answer_link;
mod ask;
mod ask_limit;
mod chat_answer;
mod close;
mod deliver;
pub mod discovery;
mod error;
mod expiry;
mod expiry_sweep;
mod live;
mod notice;
mod outbox;
pub mod projection;
mod provenance;
mod publish;
mod reconcile;
mod resolve;
mod session;
mod view;
mod wait;

pub use agent_task::{TaskLook, TaskState};
pub use alike::MAX_ALIKE;
pub use answer_link::{LINK_PATH, LINK_PREFIX, LinkPage, LinkState, answer_text};
pub use ask::Created;
pub use ask_limit::{ASK_BURST, ASKS_PER_MINUTE, AskLimits, MAX_OPEN_QUESTIONS};
pub use error::{Error, Result};
pub use expiry::{EXPIRY_EVERY, LONGEST, expires_in};
pub use expiry_sweep::GIVE_UP_AFTER;
pub use outbox::{NOTIFY_FOR, Outbound};
pub use provenance::Via;
pub use reconcile::{ORPHAN_AFTER, SWEEP_EVERY};
pub use wait::WaitOutcome;

use crate::auth::{self, Caller};
use crate::cluster::Cluster;
use crate::db::Db;
use crate::db::clarification::{self as repo, Bundle};
use crate::events::Events;
use crate::quota::{Place, Places, Refusals};
use crate::resume::Resumer;
use crate::waiters::{Waiters, Wake};
use std::sync::Arc;

/// The lifecycle service; cheap to clone.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    db: Db,
    waiters: Waiters,
    events: Events,
    cluster: Cluster,
    resumer: Resumer,
    shutdown: tokio_util::sync::CancellationToken,
    /// When a question expires if its ask does not say (`--question-ttl`).
    question_ttl: Option<std::time::Duration>,
    /// Where notices go (`--notify-webhook`, workspaces' own): the port
    /// to the channels.
    notifications: Arc<dyn Outbound>,
    /// Long waits held, per user and in total (issue 26).
    waits: Arc<Places>,
    /// What each user may ask (issue 45 item 7-P4); `None`: not bounded
    /// (without auth).
    asks: Option<Arc<ask_limit::AskRate>>,
}

/// What a refused wait is told.
const WAIT_REFUSALS: Refusals = Refusals {
    user: "too many waits open for this user (twice --max-open-sessions); end some first",
    server: "too many waits open on this server; try again later",
};

impl Lifecycle {
    /// A place for one long wait of `caller`'s, held while it blocks.
    ///
    /// # Errors
    /// [`Error::TooMany`] when the caller's user holds their share.
    pub fn wait_place(&self, caller: &Caller) -> Result<Place> {
        self.waits
            .open(caller)
            .map_err(|full| Error::TooMany(self.waits.reason(full).to_owned()))
    }
}

/// Room for `per_user` waits each; the connection cap bounds them all.
fn waits(per_user: usize) -> Arc<Places> {
    Places::new(per_user, usize::MAX, WAIT_REFUSALS)
}

impl Lifecycle {
    /// A service over `db`, holding its waiters in `waiters` and reaching
    /// the other replicas (if any) through `cluster`, resuming detached
    /// agents within what `resumer` allows.
    #[must_use]
    pub fn new(
        db: Db,
        waiters: Waiters,
        events: Events,
        cluster: Cluster,
        resumer: Resumer,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Self {
        Self {
            db,
            waiters,
            events,
            cluster,
            resumer,
            shutdown,
            question_ttl: None,
            notifications: Arc::new(outbox::Unset),
            waits: waits(2 * crate::quota::MAX_OPEN_SESSIONS),
            asks: None,
        }
    }

    /// The same service, letting one user (with their agents) hold at most
    /// `per_user` long waits at once.
    #[must_use]
    pub fn with_waits_per_user(mut self, per_user: usize) -> Self {
        self.waits = waits(per_user);
        self
    }

    /// The same service, bounding what each user asks by `limits`
    /// (under auth), or not at all (`None`).
    #[must_use]
    pub fn with_ask_limits(mut self, limits: Option<AskLimits>) -> Self {
        self.asks = limits.map(|l| Arc::new(ask_limit::AskRate::new(l)));
        self
    }

    /// The same service, expiring questions whose ask names no time after
    /// `ttl` (`--question-ttl`); never when `None`.
    #[must_use]
    pub fn with_question_ttl(mut self, ttl: Option<std::time::Duration>) -> Self {
        self.question_ttl = ttl;
        self
    }

    /// The same service, notifying as `notifications` says.
    #[must_use]
    pub fn with_notifications(mut self, notifications: Arc<dyn Outbound>) -> Self {
        self.notifications = notifications;
        self
    }

    /// What resume targets may do here (checked at session creation).
    #[must_use]
    pub fn resumer(&self) -> &Resumer {
        &self.resumer
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Steps 1 and 2 of ResolveBundle: the bundle's durable rows, authorized
    /// from their task (M5, A8). Unknown and foreign are the same 404 (A3, A5).
    pub(super) async fn authorized_bundle(
        &self,
        caller: &Caller,
        pending_id: &str,
    ) -> Result<Bundle> {
        let bundle = repo::load(self.db.pool(), pending_id).await?;
        let bundle = bundle.ok_or(Error::NotFound("clarification request"))?;
        if !auth::may_access_bundle(&self.db, caller, &bundle).await? {
            return Err(Error::NotFound("clarification request"));
        }
        Ok(bundle)
    }

    /// Wakes the waiters on `pending_id`, here and on the other replicas.
    pub(super) fn wake(&self, pending_id: &str, wake: &Wake) {
        self.waiters.wake(pending_id, wake.clone());
        self.cluster.wake(pending_id, wake);
    }

    /// Whether the asking agent is waiting for `pending_id` (or polled moments
    /// ago), on this replica or another.
    pub(super) async fn is_attached(&self, pending_id: &str) -> Result<bool> {
        Ok(self.waiters.is_attached(pending_id) || self.cluster.is_attached(pending_id).await?)
    }
}

/// The keyset position a `cursor` argument names; `""` is the start. Every
/// paged read shares it (pending, tasks, transcripts, attempts).
fn cursor(text: &str) -> Result<Option<clarify_core::Cursor>> {
    if text.is_empty() {
        return Ok(None);
    }
    clarify_core::Cursor::decode(text)
        .map(Some)
        .map_err(|e| Error::Invalid(e.to_string()))
}
