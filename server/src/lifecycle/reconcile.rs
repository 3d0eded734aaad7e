//! R6: claims a crash left undelivered, made answerable again (or kept when
//! their resume may have reached the agent), at start-up and periodically.

use clarify_core::delivery::{Event, State, transition};

use super::{Result, Sweeps};
use crate::clock::{micros, now_micros};
use crate::db::clarification::{self as repo, Guard};

impl Sweeps {
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
        for pending_id in repo::delivery_pending(self.shared.db.pool()).await? {
            // One claim that cannot be mended now must not keep the others
            // from being mended (issue 26): it is logged, and the next pass
            // tries it again.
            match self.reconcile_one(&pending_id, guard).await {
                Ok(true) => reconciled += 1,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(pending_id, %error, "claim not reconciled; tried again later");
                }
            }
        }
        Ok(reconciled)
    }

    /// Reconciles one claim; whether it changed.
    async fn reconcile_one(&self, pending_id: &str, guard: Guard) -> Result<bool> {
        let Some(bundle) = repo::load(self.shared.db.pool(), pending_id).await? else {
            return Ok(false);
        };
        // The delivery machine's `Sweep` column: kept for pickup stays
        // (not an interrupted delivery), a resume that may have reached the
        // agent is kept final, any other claim in delivery is reopened.
        let state = State::from_flags(bundle.delivery_flags());
        let swept = match transition(state, Event::Sweep) {
            Ok(step) if step.state != state => step.state,
            _ => return Ok(false),
        };
        let attempted = swept == State::Delivered;
        let now = now_micros();
        let changed = if attempted {
            repo::finalize(&self.shared.db, pending_id, now, guard).await?
        } else {
            repo::restore(&self.shared.db, pending_id, now, guard).await?
        };
        if !changed {
            return Ok(false);
        }
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
            if let Err(error) = self.shared.publish_bundle(pending_id).await {
                tracing::warn!(pending_id, %error, "restored, but browsers were not told");
            }
        }
        Ok(true)
    }

    /// Reconciles claims untouched for `orphan_after` ([`ORPHAN_AFTER`] in
    /// service), `every` so often until `shutdown`: with several replicas,
    /// one that crashed is not restarted to do it; on any backend, a claim
    /// whose delivery failed and could not be taken back is mended.
    pub async fn sweep_abandoned(
        self,
        every: std::time::Duration,
        orphan_after: std::time::Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let mut tick = tokio::time::interval(every);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let cutoff = now_micros() - micros(orphan_after);
            if let Err(error) = self.reconcile(Guard::UntouchedBefore(cutoff)).await {
                tracing::warn!(%error, "reconciling abandoned claims failed");
            }
        }
    }
}

/// How long a claim may sit undelivered before another replica takes it for
/// abandoned (its replica died mid-delivery): far longer than any delivery
/// takes, a resume dispatch being bounded by [`crate::resume::WEBHOOK_TIMEOUT`].
/// A replica that stalls longer, or whose clock is that far behind, loses
/// its claim: every later write of its delivery is fenced off by the claim's
/// token, so the answer reaches the agent at most once.
pub const ORPHAN_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// How often replicas look for abandoned claims, by default.
pub const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(30);
