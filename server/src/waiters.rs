//! In-memory waiters: agents blocked on their own bundle (a `/wait` poll or
//! an `ask_user_question_kandev` call), and other readers blocked on it
//! (observers: woken alike, but never "attached", so they never take the
//! agent's delivery). Nothing here is needed for correctness (R6): the
//! database says what was answered; this only decides whether an agent is
//! attached, and wakes whoever waits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// How long after a poll ends an agent still counts as attached, so that a
/// poll loop is not mistaken for a departed agent between two requests.
pub const GRACE: Duration = Duration::from_secs(30);

/// What wakes a waiter.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "wake", content = "response", rename_all = "snake_case")]
pub enum Wake {
    /// Still waiting.
    Nothing,
    /// Resolved (answered or rejected); the waiter re-reads the outcome.
    Resolved(clarify_core::Response),
    /// About to be resolved with this response: the live delivery is being
    /// made final. Never returned on its own; a waiter that reads the final
    /// rows before [`Wake::Resolved`] arrives takes the response from here,
    /// since the rows cannot carry a rejection's reason (R2b, R9).
    Staged(clarify_core::Response),
    /// Cancelled, expired or superseded: nobody will answer.
    Closed,
}

#[derive(Debug)]
struct Entry {
    /// The asking agent's requests blocked on the bundle now.
    agents: usize,
    /// Other readers' requests blocked on it now.
    observers: usize,
    /// When the asking agent last asked or polled here, if ever.
    agent_seen: Option<Instant>,
    /// When anyone last used this entry (for forgetting it).
    last_used: Instant,
    /// When it was last woken (the operator's wake latency).
    woken_at: Option<Instant>,
    wake: watch::Sender<Wake>,
}

/// Who a waiter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The asking agent: attached while it waits and for [`GRACE`] after.
    Agent,
    /// Anyone else who may see the bundle: woken, never attached.
    Observer,
}

/// Every bundle someone is waiting on, by `pending_id`.
#[derive(Debug, Clone, Default)]
pub struct Waiters {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
}

/// A registered waiter; dropping it (the request ended or was cancelled)
/// unregisters it.
#[derive(Debug)]
pub struct Waiting {
    waiters: Waiters,
    pending_id: String,
    role: Role,
    /// Changes when the bundle is resolved or closed.
    pub wake: watch::Receiver<Wake>,
}

impl Waiting {
    /// How long ago this bundle's waiters were last woken, if ever.
    #[must_use]
    pub fn woken_for(&self) -> Option<Duration> {
        self.waiters
            .lock()
            .get(&self.pending_id)
            .and_then(|e| e.woken_at)
            .map(|at| at.elapsed())
    }

    /// Whether this is the asking agent (whose read collects an answer
    /// kept for it), not an observer.
    #[must_use]
    pub fn is_agent(&self) -> bool {
        self.role == Role::Agent
    }
}

impl Waiters {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers the asking agent as waiting on `pending_id`: it is
    /// attached, and an answer is delivered to it.
    #[must_use]
    pub fn wait(&self, pending_id: &str) -> Waiting {
        self.register(pending_id, Role::Agent)
    }

    /// Registers someone other than the asking agent as waiting on
    /// `pending_id`: woken with the outcome, never attached.
    #[must_use]
    pub fn observe(&self, pending_id: &str) -> Waiting {
        self.register(pending_id, Role::Observer)
    }

    fn register(&self, pending_id: &str, role: Role) -> Waiting {
        let mut entries = self.lock();
        let entry = entry(&mut entries, pending_id);
        let now = Instant::now();
        match role {
            Role::Agent => {
                entry.agents += 1;
                entry.agent_seen = Some(now);
            }
            Role::Observer => entry.observers += 1,
        }
        entry.last_used = now;
        Waiting {
            waiters: self.clone(),
            pending_id: pending_id.to_owned(),
            role,
            wake: entry.wake.subscribe(),
        }
    }

    /// Records that the agent just asked and is about to poll: it counts as
    /// attached for the grace period even before its first poll arrives.
    pub fn touch(&self, pending_id: &str) {
        let mut entries = self.lock();
        forget_stale(&mut entries);
        let entry = entry(&mut entries, pending_id);
        let now = Instant::now();
        entry.agent_seen = Some(now);
        entry.last_used = now;
    }

    /// Whether the asking agent is waiting on `pending_id` now or polled
    /// within [`GRACE`].
    #[must_use]
    pub fn is_attached(&self, pending_id: &str) -> bool {
        self.lock().get(pending_id).is_some_and(Entry::attached)
    }

    /// Wakes every waiter on `pending_id`.
    pub fn wake(&self, pending_id: &str, wake: Wake) {
        if let Some(entry) = self.lock().get_mut(pending_id) {
            entry.woken_at = Some(Instant::now());
            entry.wake.send_replace(wake);
        }
    }

    /// Makes every waiter re-read its bundle from the database: a wake may
    /// have been missed (the link to the other replicas dropped).
    pub fn recheck_all(&self) {
        for entry in self.lock().values() {
            entry.wake.send_modify(|_| {});
        }
    }

    /// Agents blocked here right now (the operator's gauge): counted in
    /// place, nothing copied, however many wait.
    #[must_use]
    pub fn agents_waiting(&self) -> usize {
        self.lock().values().map(|e| e.agents).sum()
    }

    /// Until when each bundle counts as attached here, as time left from now:
    /// [`GRACE`] ahead while someone waits, else [`GRACE`] after the last poll.
    #[must_use]
    pub fn attached_for(&self) -> Vec<(String, Duration)> {
        self.lock()
            .iter()
            .filter_map(|(pending_id, e)| {
                let left = if e.agents > 0 {
                    GRACE
                } else {
                    GRACE.checked_sub(e.agent_seen?.elapsed())?
                };
                Some((pending_id.clone(), left))
            })
            .collect()
    }

    fn release(&self, pending_id: &str, role: Role) {
        let mut entries = self.lock();
        if let Some(entry) = entries.get_mut(pending_id) {
            let now = Instant::now();
            match role {
                Role::Agent => {
                    entry.agents = entry.agents.saturating_sub(1);
                    entry.agent_seen = Some(now);
                }
                Role::Observer => entry.observers = entry.observers.saturating_sub(1),
            }
            entry.last_used = now;
        }
        forget_stale(&mut entries);
    }
}

impl Entry {
    fn attached(&self) -> bool {
        self.agents > 0 || self.agent_seen.is_some_and(|at| at.elapsed() < GRACE)
    }
}

/// Forgets bundles nobody has waited on for a while (including those touched
/// for a creation that then failed).
fn forget_stale(entries: &mut HashMap<String, Entry>) {
    entries.retain(|_, e| e.agents + e.observers > 0 || e.last_used.elapsed() < GRACE * 4);
}

fn entry<'a>(entries: &'a mut HashMap<String, Entry>, pending_id: &str) -> &'a mut Entry {
    entries
        .entry(pending_id.to_owned())
        .or_insert_with(|| Entry {
            agents: 0,
            observers: 0,
            agent_seen: None,
            last_used: Instant::now(),
            woken_at: None,
            wake: watch::channel(Wake::Nothing).0,
        })
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.waiters.release(&self.pending_id, self.role);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_agent_is_attached_for_the_whole_grace_and_a_departed_one_for_less() {
        let waiters = Waiters::default();
        let waiting = waiters.wait("blocked");
        waiters.touch("polled");
        let leases: HashMap<String, Duration> = waiters.attached_for().into_iter().collect();
        assert_eq!(leases["blocked"], GRACE, "renewed in full while it waits");
        assert!(leases["polled"] <= GRACE && leases["polled"] > GRACE / 2);
        drop(waiting);
        let after: HashMap<String, Duration> = waiters.attached_for().into_iter().collect();
        assert!(after["blocked"] <= GRACE, "counts down once the wait ends");
        assert!(waiters.is_attached("blocked"), "within the grace period");
        assert!(!waiters.is_attached("never"));
    }

    #[test]
    fn an_observer_is_woken_but_never_attached() {
        let waiters = Waiters::default();
        let mut watching = waiters.observe("p");
        assert!(!waiters.is_attached("p"), "while it waits");
        assert!(
            waiters.attached_for().is_empty(),
            "no lease for an observer"
        );
        waiters.wake("p", Wake::Closed);
        assert_eq!(*watching.wake.borrow_and_update(), Wake::Closed);
        drop(watching);
        assert!(!waiters.is_attached("p"), "nor after");
    }

    #[test]
    fn recheck_wakes_every_waiter_without_changing_what_it_reads() {
        let waiters = Waiters::default();
        let mut waiting = waiters.wait("p");
        assert!(!waiting.wake.has_changed().unwrap());
        waiters.recheck_all();
        assert!(waiting.wake.has_changed().unwrap());
        assert_eq!(*waiting.wake.borrow_and_update(), Wake::Nothing);
    }
}
