//! The clarification lifecycle: the domain's use cases as five services,
//! each its own type with its own dependencies over what they all share
//! ([`shared`]: the database, waiters, events, notices):
//!
//! | service | use cases | holds besides |
//! |---|---|---|
//! | [`Asking`] | an agent asks, alone or as a task ([`ask`], [`agent_task`]) | the ask limits, the default TTL |
//! | [`Resolving`] | an answer or decline claims a bundle and is delivered ([`resolve`], [`alike`], [`deliver`], [`live`], [`answer_link`], [`chat_answer`]) | the resumer |
//! | [`Reading`] | views, lists, transcripts, notices, long waits ([`view`], [`discovery`], [`notice`], [`wait`]) | the wait places, shutdown |
//! | [`Sessions`] | sessions and turns move; detach, assign, cancel ([`session`], [`close`]) | — |
//! | [`Sweeps`] | expiry and R6 reconciliation, off any request ([`expiry_sweep`], [`reconcile`]) | [`Resolving`], for defaults |
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
mod shared;
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
use shared::Shared;
pub use wait::WaitOutcome;

use crate::auth::Caller;
use crate::cluster::Cluster;
use crate::db::Db;
use crate::events::Events;
use crate::quota::{Place, Places, Refusals};
use crate::resume::Resumer;
use crate::waiters::Waiters;
use std::sync::Arc;

/// The domain's use cases, one service each, every one with its own
/// dependencies over what they all [`Shared`]; cheap to clone. Built once
/// by the composition root (`crate::state`).
#[derive(Debug, Clone)]
pub struct Lifecycle {
    /// An agent asks (A6), alone or as a task; bounded per user.
    pub asking: Asking,
    /// An answer or a decline claims a bundle, and its delivery.
    pub resolving: Resolving,
    /// What a caller may see: bundles, lists, transcripts, notices, waits.
    pub reading: Reading,
    /// Sessions and turns move; bundles are detached, assigned, cancelled.
    pub sessions: Sessions,
    /// What runs without a request: expiry and R6 reconciliation.
    pub sweeps: Sweeps,
}

/// Room for `per_user` waits each; the connection cap bounds them all.
fn waits(per_user: usize) -> Arc<Places> {
    Places::new(per_user, usize::MAX, WAIT_REFUSALS)
}

/// What a refused wait is told.
const WAIT_REFUSALS: Refusals = Refusals {
    user: "too many waits open for this user (twice --max-open-sessions); end some first",
    server: "too many waits open on this server; try again later",
};

/// How the services are set up beyond their shared parts.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// When a question expires if its ask does not say (`--question-ttl`);
    /// never when `None`.
    pub question_ttl: Option<std::time::Duration>,
    /// What each user may ask (issue 45 item 7-P4); not bounded when
    /// `None` (without auth).
    pub ask_limits: Option<AskLimits>,
    /// Long waits one user (with their agents) may hold at once; twice
    /// [`crate::quota::MAX_OPEN_SESSIONS`] when `None`.
    pub waits_per_user: Option<usize>,
    /// Where notices go (`--notify-webhook`, workspaces' own): the port
    /// to the channels; none when `None`.
    pub notifications: Option<Arc<dyn Outbound>>,
    /// Where the operator's figures are kept (issue 49 item 1).
    pub measure: crate::measure::Measure,
}

impl Lifecycle {
    /// The services over `db`, holding waiters in `waiters` and reaching
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
        settings: Settings,
    ) -> Self {
        let notifications = settings
            .notifications
            .unwrap_or_else(|| Arc::new(outbox::Unset));
        let shared = Shared::new(
            db,
            waiters,
            events,
            cluster,
            notifications,
            settings.measure,
        );
        let per_user = settings
            .waits_per_user
            .unwrap_or(2 * crate::quota::MAX_OPEN_SESSIONS);
        Self {
            asking: Asking {
                shared: shared.clone(),
                asks: settings
                    .ask_limits
                    .map(|l| Arc::new(ask_limit::AskRate::new(l))),
                question_ttl: settings.question_ttl,
            },
            sweeps: Sweeps {
                shared: shared.clone(),
                resolving: Resolving {
                    shared: shared.clone(),
                    resumer: resumer.clone(),
                },
            },
            reading: Reading {
                shared: shared.clone(),
                waits: waits(per_user),
                shutdown,
            },
            sessions: Sessions {
                shared: shared.clone(),
            },
            resolving: Resolving { shared, resumer },
        }
    }

    /// Agents blocked on an answer on this replica now.
    #[must_use]
    pub fn agents_waiting(&self) -> usize {
        self.reading.shared.waiters.agents_waiting()
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        &self.reading.shared.db
    }
}

/// An agent asks (A6): [`ask`], [`agent_task`].
#[derive(Debug, Clone)]
pub struct Asking {
    shared: Shared,
    /// What each user may ask; `None`: not bounded (without auth).
    asks: Option<Arc<ask_limit::AskRate>>,
    question_ttl: Option<std::time::Duration>,
}

/// An answer or a decline claims a bundle and is delivered: [`resolve`],
/// [`alike`], [`deliver`], [`live`], [`answer_link`], [`chat_answer`],
/// [`provenance`].
#[derive(Debug, Clone)]
pub struct Resolving {
    shared: Shared,
    resumer: Resumer,
}

/// What a caller may see and wait for: [`view`], [`discovery`],
/// [`notice`], [`wait`].
#[derive(Debug, Clone)]
pub struct Reading {
    shared: Shared,
    /// Long waits held, per user and in total (issue 26).
    waits: Arc<Places>,
    shutdown: tokio_util::sync::CancellationToken,
}

/// Sessions and turns: [`session`], [`close`].
#[derive(Debug, Clone)]
pub struct Sessions {
    shared: Shared,
}

/// What runs without a request: [`expiry_sweep`], [`reconcile`].
#[derive(Debug, Clone)]
pub struct Sweeps {
    shared: Shared,
    /// A question that expires with defaults is answered with them.
    resolving: Resolving,
}

impl Resolving {
    /// What resume targets may do here (checked at session creation).
    #[must_use]
    pub fn resumer(&self) -> &Resumer {
        &self.resumer
    }
}

impl Reading {
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
