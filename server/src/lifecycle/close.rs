//! Closing without an answer: the agent stops waiting (detach), cancels
//! (A9); and what every closing does afterwards.

use clarify_core::PendingId;
use clarify_core::SessionState;

use super::{Error, Result, Sessions, Shared};
use crate::auth::Caller;
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Scope, Transition};
use crate::db::sessions;
use crate::waiters::Wake;

impl Sessions {
    /// The agent stopped waiting on `pending_id` (its call was cancelled):
    /// the bundle stays answerable and a later answer resumes the agent.
    ///
    /// # Errors
    /// Database errors.
    pub async fn detach(&self, pending_id: &PendingId) -> Result<()> {
        let pending_id = pending_id.as_str();
        let detached = repo::transition(
            &self.shared.db,
            Scope::Bundle(pending_id),
            Transition::Detach,
            now_micros(),
        )
        .await?;
        for pending_id in &detached {
            self.shared.publish_bundle(pending_id).await?;
        }
        Ok(())
    }

    /// [`Sessions::detach`] on behalf of `caller`: the asking agent itself,
    /// or an unscoped caller.
    ///
    /// # Errors
    /// 404 unknown or foreign, 403 for a user, 409 when not active.
    pub async fn detach_as(&self, caller: &Caller, pending_id: &PendingId) -> Result<()> {
        self.shared.authorized_bundle(caller, pending_id).await?;
        if matches!(caller, Caller::User(_)) {
            return Err(Error::Forbidden("only the asking agent can stop waiting"));
        }
        if !repo::is_active(self.shared.db.pool(), pending_id).await? {
            return Err(Error::Conflict("clarification request is no longer active"));
        }
        self.detach(pending_id).await
    }

    /// Sets who an active bundle is for (issue 29 item 6; `""`: nobody in
    /// particular): anyone who may see it may, and the pages that show it
    /// hear of it.
    ///
    /// # Errors
    /// 400 not a user name, 404 unknown or foreign, 409 when not active.
    pub async fn assign(
        &self,
        caller: &Caller,
        pending_id: &PendingId,
        assignee: &str,
    ) -> Result<()> {
        // The name is judged before any read: a bad one costs no query.
        let assignee = clarify_core::create::check_assignee(assignee)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let pending_id = pending_id.as_str();
        self.shared.authorized_bundle(caller, pending_id).await?;
        if !repo::assign(&self.shared.db, pending_id, &assignee, now_micros()).await? {
            return Err(Error::Conflict("clarification request is no longer active"));
        }
        self.shared.publish_bundle(pending_id).await
    }

    /// Cancels an active bundle (A9): authorized like the others, never a claim.
    ///
    /// # Errors
    /// 404 unknown or foreign, 409 when it is not active.
    pub async fn cancel(&self, caller: &Caller, pending_id: &PendingId) -> Result<()> {
        let pending_id = pending_id.as_str();
        let bundle = self.shared.authorized_bundle(caller, pending_id).await?;
        let changed = repo::transition(
            &self.shared.db,
            Scope::Bundle(pending_id),
            Transition::Cancel,
            now_micros(),
        )
        .await?;
        if changed.is_empty() {
            return Err(Error::Conflict("clarification request is no longer active"));
        }
        let kind = crate::measure::Measure::kind_of(&bundle.messages);
        self.shared
            .measure
            .settled("cancelled", "agent", kind, None);
        self.shared
            .closed(&changed, bundle.session_id(), bundle.task_id())
            .await
    }
}

impl Shared {
    /// The asking agent waits on `pending_id` again after a detach: it is
    /// attached again, and the change published. A write: called only for
    /// a bundle read as detached.
    pub(super) async fn reattach(&self, pending_id: &str) -> Result<()> {
        let changed = repo::transition(
            &self.db,
            Scope::Bundle(pending_id),
            Transition::Reattach,
            now_micros(),
        )
        .await?;
        for pending_id in &changed {
            self.publish_bundle(pending_id).await?;
        }
        Ok(())
    }
    pub(super) async fn closed(
        &self,
        pending_ids: &[String],
        session_id: &str,
        task_id: &str,
    ) -> Result<()> {
        for pending_id in pending_ids {
            self.wake(pending_id, &Wake::Closed);
            self.publish_bundle(pending_id).await?;
        }
        if !pending_ids.is_empty() {
            let now = now_micros();
            self.db
                .write(async |c| {
                    let from = [SessionState::WaitingForInput];
                    sessions::transition(c, session_id, &from, SessionState::Running, now).await
                })
                .await?;
        }
        self.publish_session(session_id, task_id).await;
        Ok(())
    }
}
