//! Session and turn transitions and what they do to bundles: a terminal
//! state expires them, completing the current turn detaches them, a new
//! turn supersedes them.

use clarify_core::SessionState;
use clarify_core::session::UnknownState;
use clarify_core::{SessionId, TurnId};

use super::{Error, Result, Sessions, Shared};
use crate::clock::now_micros;
use crate::db::batch::{Batch, Done};
use crate::db::clarification::{self as repo, Scope, Transition};
use crate::db::{Tx, sessions, turns};
use crate::waiters::Wake;

impl Sessions {
    /// Sets a session's state; a terminal state expires its active bundles.
    ///
    /// # Errors
    /// 400 for an unknown state, 404 for an unknown session.
    pub async fn set_session_state(
        &self,
        session_id: &SessionId,
        state: &str,
    ) -> Result<sessions::Session> {
        let session_id = session_id.as_str();
        let state: SessionState = state
            .parse()
            .map_err(|e: UnknownState| Error::Invalid(e.to_string()))?;
        let now = now_micros();
        // One transaction: the expiry is read while the session is still
        // live (an ended session's questions are no longer "active"), and
        // no question stays pending on an ended session, even for a moment.
        let mut tx = self.shared.db.begin_write().await?;
        sessions::lock(&mut tx, self.shared.db.backend(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        let expired = if state.is_terminal() {
            repo::transition_in(
                &mut tx,
                &self.shared.db,
                Scope::Session(session_id),
                Transition::Expire,
                now,
            )
            .await?
        } else {
            Vec::new()
        };
        sessions::set_state(&mut tx, session_id, state, now).await?;
        tx.commit().await?;
        let session = sessions::get(self.shared.db.pool(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        if !expired.is_empty() {
            self.shared
                .closed(&expired, session_id, &session.task_id)
                .await?;
        }
        self.shared
            .publish_session(session_id, &session.task_id)
            .await;
        Ok(session)
    }

    /// Starts a new turn, completing the open one first (which detaches its
    /// bundles). Bundles of older turns are superseded.
    ///
    /// # Errors
    /// Database errors.
    pub async fn start_turn(&self, session_id: &SessionId, now: i64) -> Result<turns::Turn> {
        let session_id = session_id.as_str();
        let mut tx = self.shared.db.begin_write().await?;
        let started = self.shared.start_turn_in(&mut tx, session_id, now).await?;
        tx.commit().await?;
        self.shared.turn_started(&started).await?;
        Ok(started.turn)
    }
}

impl Shared {
    /// [`Sessions::start_turn`]'s writes, inside the caller's write transaction;
    /// announce the result with [`Self::turn_started`] once it commits.
    pub(super) async fn start_turn_in(
        &self,
        tx: &mut Tx,
        session_id: &str,
        now: i64,
    ) -> sqlx::Result<TurnStart> {
        let (started, _) = self
            .start_turn_with(tx, session_id, now, Batch::new())
            .await?;
        Ok(started)
    }

    /// [`Self::start_turn_in`], with `also` run right after the turn's own
    /// steps in the same trip to the database; returns `also`'s results.
    pub(super) async fn start_turn_with(
        &self,
        tx: &mut Tx,
        session_id: &str,
        now: i64,
        also: Batch,
    ) -> sqlx::Result<(TurnStart, Vec<Done>)> {
        let backend = self.db.backend();
        let mut batch = Batch::new();
        // Read before anything changes: every bundle active until now is
        // superseded by the new turn.
        let superseded = batch.push(repo::active_in_session_sql(), vec![session_id.into()]);
        // The open current turn is completed, and only then are its
        // bundles detached.
        turns::complete_current_step(&mut batch, session_id, now);
        let detached = repo::detach_completed_steps(&mut batch, backend, session_id, now);
        let turn = turns::Turn::starting(session_id, now);
        turns::insert_step(&mut batch, &turn);
        let first_also = batch.append(also);
        let mut done = batch.run(tx, backend).await?;
        let also = done.split_off(first_also);
        let started = TurnStart {
            superseded: done[superseded].distinct_texts()?,
            detached: done[detached].distinct_texts()?,
            turn,
        };
        Ok((started, also))
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
}

impl Sessions {
    /// Completes a turn and runs the detach pass on its still-active bundles.
    ///
    /// # Errors
    /// Database errors.
    pub async fn complete_turn(&self, session_id: &SessionId, turn_id: &TurnId) -> Result<bool> {
        let turn_id = turn_id.as_str();
        let session_id = session_id.as_str();
        let now = now_micros();
        let completed = self
            .shared
            .db
            .write(async |c| turns::complete(c, turn_id, now).await)
            .await?;
        let is_current = turns::current(self.shared.db.pool(), session_id)
            .await?
            .is_some_and(|t| t.id == turn_id);
        if is_current {
            let detached = repo::transition(
                &self.shared.db,
                Scope::Session(session_id),
                Transition::Detach,
                now,
            )
            .await?;
            for pending_id in &detached {
                self.shared.publish_bundle(pending_id).await?;
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
