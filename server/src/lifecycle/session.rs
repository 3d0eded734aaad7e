//! Session and turn transitions and what they do to bundles: a terminal
//! state expires them, completing the current turn detaches them, a new
//! turn supersedes them.

use clarify_core::SessionState;
use clarify_core::session::UnknownState;

use super::{Error, Lifecycle, Result};
use crate::clock::now_micros;
use crate::db::clarification::{self as repo, Scope, Transition};
use crate::db::{Tx, sessions, turns};
use crate::waiters::Wake;

impl Lifecycle {
    /// Sets a session's state; a terminal state expires its active bundles.
    ///
    /// # Errors
    /// 400 for an unknown state, 404 for an unknown session.
    pub async fn set_session_state(
        &self,
        session_id: &str,
        state: &str,
    ) -> Result<sessions::Session> {
        let state: SessionState = state
            .parse()
            .map_err(|e: UnknownState| Error::Invalid(e.to_string()))?;
        let now = now_micros();
        // One transaction: the expiry is read while the session is still
        // live (an ended session's questions are no longer "active"), and
        // no question stays pending on an ended session, even for a moment.
        let mut tx = self.db.begin_write().await?;
        sessions::lock(&mut tx, self.db.backend(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        let expired = if state.is_terminal() {
            repo::transition_in(
                &mut tx,
                &self.db,
                Scope::Session(session_id),
                Transition::Expire,
                now,
            )
            .await?
        } else {
            Vec::new()
        };
        sessions::set_state(&mut *tx, session_id, state, now).await?;
        tx.commit().await?;
        let session = sessions::get(self.db.pool(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        if !expired.is_empty() {
            self.closed(&expired, session_id, &session.task_id).await?;
        }
        self.publish_session(session_id, &session.task_id).await;
        Ok(session)
    }

    /// Starts a new turn, completing the open one first (which detaches its
    /// bundles). Bundles of older turns are superseded.
    ///
    /// # Errors
    /// Database errors.
    pub async fn start_turn(&self, session_id: &str, now: i64) -> Result<turns::Turn> {
        let mut tx = self.db.begin_write().await?;
        let started = self.start_turn_in(&mut tx, session_id, now).await?;
        tx.commit().await?;
        self.turn_started(&started).await?;
        Ok(started.turn)
    }

    /// [`Self::start_turn`]'s writes, inside the caller's write transaction;
    /// announce the result with [`Self::turn_started`] once it commits.
    pub(super) async fn start_turn_in(
        &self,
        tx: &mut Tx,
        session_id: &str,
        now: i64,
    ) -> sqlx::Result<TurnStart> {
        let superseded = repo::active_in_session(&mut **tx, session_id).await?;
        let mut detached = Vec::new();
        if let Some(current) = turns::current(&mut **tx, session_id).await?
            && current.completed_at.is_none()
        {
            turns::complete(&mut **tx, &current.id, now).await?;
            // It was the current turn: its bundles are detached.
            detached = repo::transition_in(
                tx,
                &self.db,
                Scope::Session(session_id),
                Transition::Detach,
                now,
            )
            .await?;
        }
        let turn = turns::Turn::starting(session_id, now);
        turns::insert(&mut **tx, &turn).await?;
        Ok(TurnStart {
            turn,
            superseded,
            detached,
        })
    }

    /// Tells browsers and waiters what a committed turn start changed.
    pub(super) async fn turn_started(&self, started: &TurnStart) -> Result<()> {
        for pending_id in &started.detached {
            self.publish_bundle(pending_id).await?;
        }
        for pending_id in &started.superseded {
            self.wake(pending_id, &Wake::Closed);
        }
        Ok(())
    }

    /// Completes a turn and runs the detach pass on its still-active bundles.
    ///
    /// # Errors
    /// Database errors.
    pub async fn complete_turn(&self, session_id: &str, turn_id: &str) -> Result<bool> {
        let now = now_micros();
        let completed = turns::complete(self.db.pool(), turn_id, now).await?;
        let is_current = turns::current(self.db.pool(), session_id)
            .await?
            .is_some_and(|t| t.id == turn_id);
        if is_current {
            let detached = repo::transition(
                &self.db,
                Scope::Session(session_id),
                Transition::Detach,
                now,
            )
            .await?;
            for pending_id in &detached {
                self.publish_bundle(pending_id).await?;
            }
        }
        Ok(completed)
    }
}

/// A turn started inside a transaction, with the bundles it closed.
#[derive(Debug)]
pub(super) struct TurnStart {
    /// The new turn.
    pub turn: turns::Turn,
    /// The session's bundles that were active: superseded now.
    superseded: Vec<String>,
    /// Those of the completed turn, detached.
    detached: Vec<String>,
}
