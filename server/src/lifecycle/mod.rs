//! The clarification lifecycle: asking, resolving (ResolveBundle), waiting,
//! cancelling, and the session/turn events that detach or expire bundles.
//!
//! The database decides; this layer orders the steps. Errors are the HTTP
//! API's own, since every caller of this module answers over HTTP.

pub mod discovery;
pub mod projection;
pub mod resume;
pub mod waiters;

use clarify_core::{
    NewBundle, Outcome, PendingBundle, RespondBody, Response, Status, Submission, agent_text,
    listing::BundleIdentity, stored::bundle_questions, validate_new_bundle, validate_submission,
    winner,
};
use serde::Serialize;
use serde_json::json;

use crate::auth::{self, Caller};
use crate::clock::{self, micros, now_micros};
use crate::cluster::Cluster;
use crate::db::clarification::{self as repo, Bundle, Guard, Scope, Transition};
use crate::db::messages::{self, CLARIFICATION_REQUEST, Message};
use crate::db::{Db, sessions, turns};
use crate::events::Events;
use crate::http::error::{Error, Result};
use crate::ids::new_id;
use resume::{ResumePayload, ResumeTarget, Resumer};
use waiters::{Waiters, Waiting, Wake};

/// What `create_bundle` did.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    /// The bundle's id.
    pub pending_id: String,
    /// `false` when an identical active request already existed.
    pub created: bool,
}

/// A bundle as `GET /clarification/{id}` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct BundleView {
    /// The bundle as listed (L3/L4 shapes).
    #[serde(flatten)]
    pub bundle: PendingBundle,
    /// `pending`, `answered`, `rejected`, `cancelled` or `expired`.
    pub status: String,
    /// Whether it can still be answered (D4).
    pub active: bool,
    /// Whether the agent stopped waiting (the answer will resume it).
    pub agent_disconnected: bool,
    /// Whether the agent is blocked on it right now (or polled moments ago):
    /// an answer reaches it in its turn.
    pub agent_waiting: bool,
    /// The winner's response, `null` until resolved.
    pub response: Option<Response>,
}

/// The lifecycle service; cheap to clone.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    db: Db,
    waiters: Waiters,
    events: Events,
    cluster: Cluster,
    resumer: Resumer,
    shutdown: tokio_util::sync::CancellationToken,
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
        }
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

    /// Creates a bundle on `session_id`'s current turn (starting one if the
    /// session has none open) and puts the session in `WAITING_FOR_INPUT`.
    /// An identical active request returns the existing `pending_id`.
    /// `attach`: the agent is about to poll for the answer, so it counts as
    /// attached (for [`waiters::GRACE`]) from the moment the bundle exists.
    ///
    /// # Errors
    /// 400 for an invalid bundle, 404 for an unknown session, 409 for an
    /// ended one.
    pub async fn create_bundle(
        &self,
        session_id: &str,
        new: &NewBundle,
        attach: bool,
    ) -> Result<Created> {
        let pending_id = new_id();
        if attach {
            self.waiters.touch(&pending_id);
        }
        let created = self
            .create_bundle_as(session_id, new, pending_id, attach)
            .await?;
        if attach && !created.created {
            self.waiters.touch(&created.pending_id);
        }
        Ok(created)
    }

    /// Creates a bundle for an agent that will block on it: the waiter is
    /// registered before the bundle exists, so an answer given the instant
    /// it is stored already finds the agent attached.
    ///
    /// # Errors
    /// As [`Lifecycle::create_bundle`].
    pub async fn create_attached(
        &self,
        session_id: &str,
        new: &NewBundle,
    ) -> Result<(Created, Waiting)> {
        let pending_id = new_id();
        let waiting = self.waiters.wait(&pending_id);
        let created = self
            .create_bundle_as(session_id, new, pending_id.clone(), true)
            .await?;
        let waiting = if created.pending_id == pending_id {
            waiting
        } else {
            // An identical request was already active: wait on that one.
            self.waiters.wait(&created.pending_id)
        };
        Ok((created, waiting))
    }

    async fn create_bundle_as(
        &self,
        session_id: &str,
        new: &NewBundle,
        pending_id: String,
        attach: bool,
    ) -> Result<Created> {
        let spec = validate_new_bundle(new).map_err(|e| Error::BadRequest(e.to_string()))?;
        let now = now_micros();
        let mut tx = self.db.begin_write().await?;
        let session = sessions::lock(&mut tx, self.db.backend(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        if sessions::is_terminal(&session.state) {
            return Err(Error::Conflict("session has ended"));
        }
        let existing = repo::active_bundles_of_session(&mut tx, session_id)
            .await?
            .into_iter()
            .find(|bundle| {
                bundle_questions(&bundle.messages) == spec.questions
                    && bundle.messages[0].metadata.context == spec.context
            })
            .map(|bundle| bundle.messages[0].metadata.pending_id.clone());
        let (pending_id, added) = match existing {
            Some(existing) => (existing, Vec::new()),
            None => {
                let added = insert_bundle(&mut tx, &session, &spec, &pending_id, now).await?;
                sessions::transition(
                    &mut *tx,
                    session_id,
                    &NON_TERMINAL,
                    "WAITING_FOR_INPUT",
                    now,
                )
                .await?;
                (pending_id, added)
            }
        };
        if attach {
            // In the same transaction: no replica ever sees the bundle
            // without its agent attached.
            self.cluster.attach(&mut *tx, &pending_id).await?;
        }
        tx.commit().await?;
        let created = !added.is_empty();
        if created {
            // Published only once durable, so no browser sees a question
            // that a failed commit never stored.
            self.publish_messages("session.message.added", session_id, &added)
                .await?;
            self.publish_session(session_id, &session.task_id).await;
        }
        Ok(Created {
            pending_id,
            created,
        })
    }

    /// Steps 1 and 2 of ResolveBundle: the bundle's durable rows, authorized
    /// from their task (M5, A8). Unknown and foreign are the same 404 (A3, A5).
    async fn authorized_bundle(&self, caller: &Caller, pending_id: &str) -> Result<Bundle> {
        let bundle = repo::load(self.db.pool(), pending_id).await?;
        let bundle = bundle.ok_or(Error::NotFound("clarification request"))?;
        if !auth::may_access_bundle(&self.db, caller, &bundle).await? {
            return Err(Error::NotFound("clarification request"));
        }
        Ok(bundle)
    }

    /// ResolveBundle: authorize, validate (N6–N8b, L16), claim (P1), tell a
    /// loser the winner (R2), and deliver for the winner only (R7).
    ///
    /// # Errors
    /// 404 unknown or foreign, 400 invalid, 409 inactive with no winner, 500
    /// on a claim error (R4a) or a failed delivery (R7a, rolled back).
    pub async fn resolve(
        &self,
        caller: &Caller,
        pending_id: &str,
        submission: &Submission,
    ) -> Result<RespondBody> {
        let bundle = self.authorized_bundle(caller, pending_id).await?;
        if matches!(caller, Caller::Agent { .. }) {
            return Err(Error::Forbidden("an agent cannot answer its own question"));
        }
        let questions = bundle_questions(&bundle.messages);
        let outcome = validate_submission(&questions, submission)
            .map_err(|e| Error::BadRequest(e.to_string()))?;

        let now = now_micros();
        let claimed = match repo::complete_active_bundle(&self.db, pending_id, &outcome, now).await
        {
            Ok(claimed) => claimed,
            Err(error) => {
                // R4a: logged with the pending_id, answered 500, not retried.
                tracing::error!(pending_id, %error, "clarification claim failed");
                return Err(Error::internal(error));
            }
        };
        let Some(claim) = claimed else {
            return self.loser(pending_id).await;
        };

        let response = outcome.to_response(pending_id, &clock::rfc3339(now));
        self.deliver(&bundle, &questions, &outcome, &response, claim.token)
            .await?;
        Ok(RespondBody::new(true, outcome.status(), response))
    }

    /// R2: one re-read, no retry (R2a). A winner → 200 `claimed: false` with
    /// its reconstructed response (R2b); none → 409.
    async fn loser(&self, pending_id: &str) -> Result<RespondBody> {
        let reread = repo::load(self.db.pool(), pending_id).await?;
        let won = reread
            .as_ref()
            .and_then(|b| winner(&b.messages).map(|w| (w, b.updated_at())));
        match won {
            Some((w, at)) => Ok(RespondBody::new(
                false,
                w.status,
                w.to_response(pending_id, &clock::rfc3339(at)),
            )),
            None => Err(Error::Conflict("clarification request is no longer active")),
        }
    }

    /// R7: a live waiter gets the answer in its turn; otherwise a detached
    /// answer resumes the agent through its session's target and a detached
    /// rejection is stored without resuming (R9). Anything not accepted is
    /// rolled back (restore) and reported (R7a). Every write is guarded by
    /// the claim's `token`: a claim reconciliation took back reaches no one.
    async fn deliver(
        &self,
        bundle: &Bundle,
        questions: &[clarify_core::Question],
        outcome: &Outcome,
        response: &Response,
        token: i64,
    ) -> Result<()> {
        let pending_id = response.pending_id.as_str();
        let session_id = bundle.session_id();
        let detached = bundle
            .messages
            .iter()
            .any(|m| m.metadata.agent_disconnected);
        let now = now_micros();
        let ours = Guard::Claim(token);

        let attached = !detached
            && self.is_attached(pending_id).await.unwrap_or_else(|error| {
                // The claim is made: deliver it some other way rather than
                // strand it.
                tracing::warn!(pending_id, %error, "could not tell whether the agent waits");
                false
            });
        let delivered = if attached {
            // Final before the wake: a waiter that reads the claim still in
            // delivery sleeps until the wake, and a claim taken back is
            // never handed over.
            let delivered = repo::finalize(&self.db, pending_id, now, ours).await?;
            if delivered {
                self.wake(pending_id, &Wake::Resolved(response.clone()));
            }
            delivered
        } else if matches!(outcome, Outcome::Rejected { .. }) {
            repo::finalize(&self.db, pending_id, now, ours).await?
        } else {
            self.resume(bundle, questions, outcome, response, token)
                .await?
        };

        if !delivered {
            repo::restore(&self.db, pending_id, now_micros(), ours).await?;
            return Err(Error::Undelivered);
        }
        if !attached {
            // Observers (readers who are not the agent) learn the outcome too.
            self.wake(pending_id, &Wake::Resolved(response.clone()));
        }
        sessions::transition(
            self.db.pool(),
            session_id,
            &["WAITING_FOR_INPUT"],
            "RUNNING",
            now,
        )
        .await?;
        self.publish_bundle(pending_id).await?;
        self.publish_session(session_id, bundle.task_id()).await;
        Ok(())
    }

    /// Resumes a detached agent with the answer claimed under `token`;
    /// finalizes on success and restores on a refused dispatch.
    async fn resume(
        &self,
        bundle: &Bundle,
        questions: &[clarify_core::Question],
        outcome: &Outcome,
        response: &Response,
        token: i64,
    ) -> Result<bool> {
        let pending_id = response.pending_id.as_str();
        let session_id = bundle.session_id();
        let Some(session) = sessions::get(self.db.pool(), session_id).await? else {
            return Ok(false);
        };
        let Ok(target) = serde_json::from_str::<ResumeTarget>(&session.resume_target) else {
            tracing::warn!(
                pending_id,
                "detached answer but the session has no resume target"
            );
            return Ok(false);
        };
        let prompt = agent_text::resume_prompt(questions, outcome);
        let payload = ResumePayload {
            session_id,
            task_id: bundle.task_id(),
            pending_id,
            prompt: &prompt,
            response,
        };
        let marked_at = now_micros();
        if !repo::mark_resume_attempted(&self.db, pending_id, marked_at, token).await? {
            // No longer ours to deliver: reconciliation took the claim back
            // (this replica looked dead), so nothing may reach the agent.
            tracing::warn!(pending_id, "claim reconciled before its resume");
            return Ok(false);
        }
        let ours = Guard::Claim(marked_at);
        if !self.resumer.dispatch(&target, &payload).await {
            repo::restore(&self.db, pending_id, now_micros(), ours).await?;
            return Ok(false);
        }
        // The agent continues in a successor turn, created only now that the
        // dispatch was accepted.
        let now = now_micros();
        self.start_turn(session_id, now).await?;
        // `false` only if reconciliation kept the claim meanwhile: either way
        // the answer stands and was sent once.
        repo::finalize(&self.db, pending_id, now, ours).await?;
        Ok(true)
    }

    /// The bundle as stored, for `GET /clarification/{id}`.
    ///
    /// # Errors
    /// 404 unknown or foreign.
    pub async fn read(&self, caller: &Caller, pending_id: &str) -> Result<BundleView> {
        let bundle = self.authorized_bundle(caller, pending_id).await?;
        self.view(&bundle).await
    }

    async fn view(&self, bundle: &Bundle) -> Result<BundleView> {
        let pending_id = bundle.messages[0].metadata.pending_id.clone();
        let active = repo::is_active(self.db.pool(), &pending_id).await?;
        let won = winner(&bundle.messages);
        let status = match (&won, active) {
            (Some(w), _) => w.status.as_str().to_owned(),
            (None, true) => Status::Pending.as_str().to_owned(),
            (None, false) => bundle
                .messages
                .iter()
                .map(|m| m.metadata.status.clone())
                .find(|s| !clarify_core::Status::counts_as_pending(s))
                .unwrap_or_else(|| "superseded".to_owned()),
        };
        let created_at = bundle.created_at();
        let listed = PendingBundle::from_messages(
            BundleIdentity {
                pending_id: pending_id.clone(),
                task_id: bundle.task_id().to_owned(),
                session_id: bundle.session_id().to_owned(),
            },
            clock::rfc3339(created_at),
            clarify_core::listing::age_seconds(now_micros(), created_at),
            &bundle.messages,
        );
        let agent_disconnected = bundle
            .messages
            .iter()
            .any(|m| m.metadata.agent_disconnected);
        Ok(BundleView {
            bundle: listed,
            status,
            active,
            agent_disconnected,
            agent_waiting: !agent_disconnected && self.is_attached(&pending_id).await?,
            response: won.map(|w| w.to_response(&pending_id, &clock::rfc3339(bundle.updated_at()))),
        })
    }

    /// Long-polls for the bundle's resolution (A5a, A7): returns the
    /// outcome, 409 when it can no longer be answered, 504 after `timeout`.
    /// Dropping the future (the client went away) unregisters the waiter.
    ///
    /// # Errors
    /// 404 unknown or foreign, 409 closed, 504 timeout.
    pub async fn wait(
        &self,
        caller: &Caller,
        pending_id: &str,
        timeout: std::time::Duration,
    ) -> Result<RespondBody> {
        self.authorized_bundle(caller, pending_id).await?;
        // Register before reading, so a resolution between the read and the
        // wait still wakes us. Delivery belongs to the asking agent: only
        // its own credential (its session's agent token, or the one local
        // user with auth off) attaches; anyone else who may see the bundle
        // observes the outcome without taking the delivery.
        let mut waiting = if caller.is_asking_agent() {
            let waiting = self.waiters.wait(pending_id);
            self.cluster.attach(self.db.pool(), pending_id).await?;
            waiting
        } else {
            self.waiters.observe(pending_id)
        };
        self.await_outcome(pending_id, &mut waiting, timeout).await
    }

    /// Blocks on a registered waiter until the bundle is resolved (its
    /// outcome), closed (409) or `timeout` passes (504). Dropping the future
    /// leaves the bundle untouched.
    ///
    /// # Errors
    /// 409 closed, 504 timeout, database errors.
    pub async fn await_outcome(
        &self,
        pending_id: &str,
        waiting: &mut Waiting,
        timeout: std::time::Duration,
    ) -> Result<RespondBody> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Wake::Resolved(response) = waiting.wake.borrow_and_update().clone() {
                let status = if response.rejected {
                    Status::Rejected
                } else {
                    Status::Answered
                };
                return Ok(RespondBody::new(true, status, response));
            }
            // Activeness before the rows: a claim committing between the two
            // reads then shows up as a winner, never as "inactive, no winner".
            let active = repo::is_active(self.db.pool(), pending_id).await?;
            let bundle = repo::load(self.db.pool(), pending_id)
                .await?
                .ok_or(Error::NotFound("clarification request"))?;
            if let Some(w) = winner(&bundle.messages) {
                let delivery_pending = bundle
                    .messages
                    .iter()
                    .any(|m| m.metadata.response_delivery_pending);
                if !delivery_pending {
                    // A live delivery that raced this read carries what the
                    // stored rows cannot: the rejection's reason (R2b).
                    if let Wake::Resolved(response) = waiting.wake.borrow().clone() {
                        return Ok(RespondBody::new(true, w.status, response));
                    }
                    return Ok(RespondBody::new(
                        true,
                        w.status,
                        w.to_response(pending_id, &clock::rfc3339(bundle.updated_at())),
                    ));
                }
            } else if !active {
                return Err(Error::Conflict("clarification request is no longer active"));
            }
            tokio::select! {
                changed = waiting.wake.changed() => {
                    if changed.is_err() { return Err(Error::WaitTimeout); }
                }
                () = tokio::time::sleep_until(deadline) => return Err(Error::WaitTimeout),
                () = self.shutdown.cancelled() => {
                    return Err(Error::Status(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "the server is shutting down; wait again".into(),
                    ));
                }
            }
        }
    }

    /// The agent stopped waiting on `pending_id` (its call was cancelled):
    /// the bundle stays answerable and a later answer resumes the agent.
    ///
    /// # Errors
    /// Database errors.
    pub async fn detach(&self, pending_id: &str) -> Result<()> {
        let detached = repo::transition(
            &self.db,
            Scope::Bundle(pending_id),
            Transition::Detach,
            now_micros(),
        )
        .await?;
        for pending_id in &detached {
            self.publish_bundle(pending_id).await?;
        }
        Ok(())
    }

    /// [`Lifecycle::detach`] on behalf of `caller`: the asking agent itself,
    /// or an unscoped caller.
    ///
    /// # Errors
    /// 404 unknown or foreign, 403 for a user, 409 when not active.
    pub async fn detach_as(&self, caller: &Caller, pending_id: &str) -> Result<()> {
        self.authorized_bundle(caller, pending_id).await?;
        if matches!(caller, Caller::User(_)) {
            return Err(Error::Forbidden("only the asking agent can stop waiting"));
        }
        if !repo::is_active(self.db.pool(), pending_id).await? {
            return Err(Error::Conflict("clarification request is no longer active"));
        }
        self.detach(pending_id).await
    }

    /// Cancels an active bundle (A9): authorized like the others, never a claim.
    ///
    /// # Errors
    /// 404 unknown or foreign, 409 when it is not active.
    pub async fn cancel(&self, caller: &Caller, pending_id: &str) -> Result<()> {
        let bundle = self.authorized_bundle(caller, pending_id).await?;
        let changed = repo::transition(
            &self.db,
            Scope::Bundle(pending_id),
            Transition::Cancel,
            now_micros(),
        )
        .await?;
        if changed.is_empty() {
            return Err(Error::Conflict("clarification request is no longer active"));
        }
        self.closed(&changed, bundle.session_id(), bundle.task_id())
            .await
    }

    /// Sets a session's state; a terminal state expires its active bundles.
    ///
    /// # Errors
    /// 400 for an unknown state, 404 for an unknown session.
    pub async fn set_session_state(
        &self,
        session_id: &str,
        state: &str,
    ) -> Result<sessions::Session> {
        if !sessions::STATES.contains(&state) {
            return Err(Error::BadRequest(format!(
                "state: must be one of {}",
                sessions::STATES.join(", ")
            )));
        }
        let now = now_micros();
        if !sessions::set_state(self.db.pool(), session_id, state, now).await? {
            return Err(Error::NotFound("session"));
        }
        let session = sessions::get(self.db.pool(), session_id)
            .await?
            .ok_or(Error::NotFound("session"))?;
        if sessions::is_terminal(state) {
            let expired = repo::transition(
                &self.db,
                Scope::Session(session_id),
                Transition::Expire,
                now,
            )
            .await?;
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
        let superseded = repo::active_in_session(self.db.pool(), session_id).await?;
        if let Some(current) = turns::current(self.db.pool(), session_id).await?
            && current.completed_at.is_none()
        {
            self.complete_turn(session_id, &current.id).await?;
        }
        let turn = turns::Turn::starting(session_id, now);
        turns::insert(self.db.pool(), &turn).await?;
        for pending_id in &superseded {
            self.wake(pending_id, &Wake::Closed);
        }
        Ok(turn)
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

    /// R6: a claim a crash left undelivered becomes answerable again —
    /// unless a resume dispatch had started, which may have reached the
    /// agent; that one is kept (an answer reaches the agent at most once).
    ///
    /// `guard`: [`Guard::Any`] for one process just started;
    /// [`Guard::UntouchedBefore`] when other replicas may be delivering their
    /// claims right now (see [`ORPHAN_AFTER`]).
    ///
    /// # Errors
    /// Database errors.
    pub async fn reconcile(&self, guard: Guard) -> Result<usize> {
        let mut reconciled = 0;
        for pending_id in repo::delivery_pending(self.db.pool()).await? {
            let attempted = repo::load(self.db.pool(), &pending_id)
                .await?
                .is_some_and(|b| b.messages.iter().any(|m| m.metadata.resume_attempted));
            let now = now_micros();
            let changed = if attempted {
                repo::finalize(&self.db, &pending_id, now, guard).await?
            } else {
                repo::restore(&self.db, &pending_id, now, guard).await?
            };
            if changed {
                reconciled += 1;
                if attempted {
                    tracing::warn!(
                        pending_id,
                        "kept a clarification whose resume was in flight at a crash"
                    );
                } else {
                    tracing::warn!(
                        pending_id,
                        "restored a clarification whose delivery was interrupted"
                    );
                    self.publish_bundle(&pending_id).await?;
                }
            }
        }
        Ok(reconciled)
    }

    /// Reconciles abandoned claims `every` so often until `shutdown`: with
    /// several replicas, one that crashed is not restarted to do it.
    pub async fn sweep_abandoned(
        self,
        every: std::time::Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let mut tick = tokio::time::interval(every);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let cutoff = now_micros() - micros(ORPHAN_AFTER);
            if let Err(error) = self.reconcile(Guard::UntouchedBefore(cutoff)).await {
                tracing::warn!(%error, "reconciling abandoned claims failed");
            }
        }
    }

    /// Wakes the waiters on `pending_id`, here and on the other replicas.
    fn wake(&self, pending_id: &str, wake: &Wake) {
        self.waiters.wake(pending_id, wake.clone());
        self.cluster.wake(pending_id, wake);
    }

    /// Whether the asking agent is waiting for `pending_id` (or polled moments
    /// ago), on this replica or another.
    async fn is_attached(&self, pending_id: &str) -> Result<bool> {
        Ok(self.waiters.is_attached(pending_id) || self.cluster.is_attached(pending_id).await?)
    }

    async fn closed(&self, pending_ids: &[String], session_id: &str, task_id: &str) -> Result<()> {
        for pending_id in pending_ids {
            self.wake(pending_id, &Wake::Closed);
            self.publish_bundle(pending_id).await?;
        }
        if !pending_ids.is_empty() {
            sessions::transition(
                self.db.pool(),
                session_id,
                &["WAITING_FOR_INPUT"],
                "RUNNING",
                now_micros(),
            )
            .await?;
        }
        self.publish_session(session_id, task_id).await;
        Ok(())
    }

    async fn publish_bundle(&self, pending_id: &str) -> Result<()> {
        let Some(bundle) = repo::load(self.db.pool(), pending_id).await? else {
            return Ok(());
        };
        let mut updated = Vec::with_capacity(bundle.rows.len());
        for row in &bundle.rows {
            updated.extend(messages::get(self.db.pool(), &row.id).await?);
        }
        self.publish_messages("session.message.updated", bundle.session_id(), &updated)
            .await
    }

    /// Publishes message events, each carrying its session's pending action
    /// as it stands now (`"clarification"` or `null`).
    async fn publish_messages(
        &self,
        action: &'static str,
        session_id: &str,
        list: &[Message],
    ) -> Result<()> {
        let waiting = !repo::active_in_session(self.db.pool(), session_id)
            .await?
            .is_empty();
        let pending_action = waiting.then_some("clarification");
        for message in list {
            let mut payload = json!(message);
            payload["pending_action"] = json!(pending_action);
            self.events.publish(action, payload);
        }
        Ok(())
    }

    async fn publish_session(&self, session_id: &str, task_id: &str) {
        self.events.publish(
            "task.updated",
            json!({"task_id": task_id, "session_id": session_id}),
        );
    }
}

/// Stores the questions of a new bundle `pending_id` on the session's open
/// turn (starting one if it has none), D1 timestamps apart.
async fn insert_bundle(
    tx: &mut crate::db::Tx,
    session: &sessions::Session,
    spec: &clarify_core::BundleSpec,
    pending_id: &str,
    now: i64,
) -> Result<Vec<Message>> {
    let turn_id = match turns::current(&mut **tx, &session.id).await? {
        Some(turn) if turn.completed_at.is_none() => turn.id,
        _ => {
            let turn = turns::Turn::starting(&session.id, now);
            turns::insert(&mut **tx, &turn).await?;
            turn.id
        }
    };
    let mut added = Vec::with_capacity(spec.questions.len());
    let total = i64::try_from(spec.questions.len()).unwrap_or(i64::MAX);
    for (index, question) in spec.questions.iter().enumerate() {
        let metadata = clarify_core::ClarificationMetadata {
            pending_id: pending_id.to_owned(),
            question_id: question.question_id.clone(),
            question: question.clone(),
            question_index: i64::try_from(index).unwrap_or(i64::MAX),
            question_total: total,
            context: spec.context.clone(),
            status: Status::Pending.as_str().to_owned(),
            ..Default::default()
        };
        // D1: distinct, increasing timestamps within the bundle.
        let at = now + i64::try_from(index).unwrap_or(0);
        let message = Message {
            id: new_id(),
            task_session_id: session.id.clone(),
            task_id: session.task_id.clone(),
            turn_id: turn_id.clone(),
            kind: CLARIFICATION_REQUEST.to_owned(),
            content: question.prompt.clone(),
            metadata: metadata.to_json().to_string(),
            created_at: at,
            updated_at: at,
        };
        messages::insert(&mut **tx, &message).await?;
        added.push(message);
    }
    Ok(added)
}

/// How long a claim may sit undelivered before another replica takes it for
/// abandoned (its replica died mid-delivery): far longer than any delivery
/// takes, a resume dispatch being bounded by [`resume::WEBHOOK_TIMEOUT`].
/// A replica that stalls longer, or whose clock is that far behind, loses
/// its claim: every later write of its delivery is fenced off by the claim's
/// token, so the answer reaches the agent at most once.
pub const ORPHAN_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// How often replicas look for abandoned claims, by default.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Every state a bundle can put a session into WAITING_FOR_INPUT from.
const NON_TERMINAL: [&str; 5] = [
    "CREATED",
    "STARTING",
    "RUNNING",
    "IDLE",
    "WAITING_FOR_INPUT",
];
