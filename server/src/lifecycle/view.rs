//! One bundle as `GET /clarification/{id}` shows it.

use clarify_core::PendingId;
use clarify_core::api::BundleView;
use clarify_core::listing::BundleIdentity;
use clarify_core::{PendingBundle, Response, Status, ViewStatus, Winner};

use super::{Reading, Result};
use crate::auth::Caller;
use crate::clock::{self, now_micros};
use crate::db::clarification::{self as repo, Bundle};
use crate::db::declines;

impl Reading {
    /// The bundle as stored, for `GET /clarification/{id}`: the one read
    /// that may write, as its name says. The asking agent's own read
    /// collects an answer kept for it (pull delivery): delivered from then
    /// on; anyone else's read changes nothing.
    ///
    /// # Errors
    /// 404 unknown or foreign.
    pub async fn read_collecting(
        &self,
        caller: &Caller,
        pending_id: &PendingId,
    ) -> Result<BundleView> {
        let pending_id = pending_id.as_str();
        let bundle = self.shared.authorized_bundle(caller, pending_id).await?;
        let view = self.view(&bundle).await?;
        if view.awaiting_pickup && caller.is_asking_agent(bundle.session_id()) {
            self.shared.collect(&bundle).await?;
            let bundle = self.shared.authorized_bundle(caller, pending_id).await?;
            return self.view(&bundle).await;
        }
        Ok(view)
    }

    /// The bundle as stored, changing nothing (no pull delivery, whoever
    /// reads): for a caller that only looks.
    ///
    /// # Errors
    /// 404 unknown or foreign.
    pub async fn read(&self, caller: &Caller, pending_id: &PendingId) -> Result<BundleView> {
        let bundle = self
            .shared
            .authorized_bundle(caller, pending_id.as_str())
            .await?;
        self.view(&bundle).await
    }

    async fn view(&self, bundle: &Bundle) -> Result<BundleView> {
        let pending_id = bundle.pending_id().to_owned();
        let active = repo::is_active(self.shared.db.pool(), &pending_id).await?;
        let won = bundle.winner();
        let status = match (&won, active) {
            (Some(w), _) => w.status.into(),
            (None, true) => Status::Pending.into(),
            (None, false) => ViewStatus::closed(
                bundle
                    .messages
                    .iter()
                    .map(|m| &m.metadata.status)
                    .find(|s| !s.counts_as_pending()),
            ),
        };
        let created_at = bundle.created_at();
        let mut listed = PendingBundle::from_messages(
            BundleIdentity {
                pending_id: pending_id.clone(),
                task_id: bundle.task_id().to_owned(),
                session_id: bundle.session_id().to_owned(),
            },
            clock::rfc3339(created_at),
            clarify_core::listing::age_seconds(now_micros(), created_at),
            &bundle.messages,
        );
        listed.expires_at = super::expiry::expires_at_text(bundle);
        let agent_disconnected = bundle.detached();
        Ok(BundleView {
            bundle: listed,
            status,
            active,
            agent_disconnected,
            agent_waiting: !agent_disconnected && self.shared.is_attached(&pending_id).await?,
            awaiting_pickup: bundle.awaits_pickup(),
            answered_by: bundle.answered_by(),
            response: match won {
                Some(w) => Some(self.winner_response(bundle, &w).await?),
                None => None,
            },
        })
    }

    /// The winner's envelope for the bundle's readers and its agent: R2b's
    /// reconstruction from the rows, with the decline's reason read beside
    /// them (issue 45 item 4). Only a losing caller's replay goes without
    /// it (R2b).
    pub(super) async fn winner_response(
        &self,
        bundle: &Bundle,
        winner: &Winner,
    ) -> Result<Response> {
        let pending_id = bundle.pending_id();
        let mut response = winner.to_response(pending_id, &clock::rfc3339(bundle.updated_at()));
        if response.rejected {
            response.reject_reason = declines::reason(self.shared.db.pool(), pending_id).await?;
        }
        Ok(response)
    }
}
