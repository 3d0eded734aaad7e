//! What every service of the lifecycle shares: the database, the waiters
//! here and on other replicas, and the ways a change is told (browser
//! events, notices). Its methods are the steps several use cases take.

use super::{Error, Outbound, Result};
use crate::auth::{self, Caller};
use crate::cluster::Cluster;
use crate::db::Db;
use crate::db::clarification::{self as repo, Bundle};
use crate::events::Events;
use crate::waiters::{Waiters, Wake};

/// The parts every service holds; cheap to clone.
#[derive(Debug, Clone)]
pub(super) struct Shared {
    pub(super) db: Db,
    pub(super) waiters: Waiters,
    pub(super) events: Events,
    pub(super) cluster: Cluster,
    pub(super) notifications: std::sync::Arc<dyn Outbound>,
    /// The operator's figures (issue 49 item 1).
    pub(super) measure: crate::measure::Measure,
}

impl Shared {
    pub(super) fn new(
        db: Db,
        waiters: Waiters,
        events: Events,
        cluster: Cluster,
        notifications: std::sync::Arc<dyn Outbound>,
        measure: crate::measure::Measure,
    ) -> Self {
        Self {
            db,
            waiters,
            events,
            cluster,
            notifications,
            measure,
        }
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
