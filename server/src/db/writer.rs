//! The one writer (issue 31): on SQLite every write transaction runs on one
//! connection that lives outside the pool, owned by an actor that lends it
//! to one unit of work at a time and commits the units that queued while
//! it was busy together (group commit), each under a savepoint of its own.
//! With `synchronous = FULL` a commit waits for the disk, so an answer
//! acknowledged survives a power loss; grouping makes many answers share
//! that one flush.
//!
//! A unit is the caller's own code between [`Db::begin_write`] and
//! [`Tx::commit`]: it keeps its borrows, its early returns and its `?`,
//! because what travels is the connection, not the code. [`Tx::commit`]
//! returns only once the group is on disk; a unit that fails, rolls back or
//! is dropped (its caller cancelled, a panic) undoes only its own
//! savepoint. If the transaction itself is lost (SQLite rolls back a whole
//! transaction on an I/O error or a full disk), every unit of the group is
//! told its commit failed: nothing was acknowledged that is not on disk.
//!
//! On PostgreSQL a [`Tx`] is a transaction of the pool, as before: its
//! server commits concurrent transactions together on its own.
//!
//! [`Db::begin_write`]: super::Db::begin_write

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::{AnyConnection, Executor as _};
use tokio::sync::{mpsc, oneshot};

/// Units committed together at most: bounds how long the first of a group
/// waits for its commit behind the others.
const GROUP: usize = 64;

/// How long a unit waits for the connection at most.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A unit asking for the connection.
type Request = oneshot::Sender<Result<Lease, String>>;

/// The handle the pool's users keep: asks the actor for the connection.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    requests: mpsc::UnboundedSender<Request>,
    counts: Arc<Counts>,
}

/// What the writer has done since it started (for the benchmarks).
#[derive(Debug, Default)]
struct Counts {
    units: AtomicU64,
    commits: AtomicU64,
}

/// Units of work kept and the commits (each one flush of SQLite's log to
/// disk under `synchronous = FULL`) that made them durable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCounts {
    /// Units committed.
    pub units: u64,
    /// Commits that did it.
    pub commits: u64,
}

impl Writer {
    /// Starts the actor on `conn`, a connection of its own (the pragmas
    /// already set); it stops when the last handle is dropped.
    pub(super) fn start(conn: AnyConnection) -> Self {
        let (requests, queue) = mpsc::unbounded_channel();
        let counts = Arc::new(Counts::default());
        tokio::spawn(
            Actor {
                conn: Some(conn),
                queue,
                counts: counts.clone(),
            }
            .run(),
        );
        Self { requests, counts }
    }

    pub(super) fn counts(&self) -> WriteCounts {
        WriteCounts {
            units: self.counts.units.load(Ordering::Relaxed),
            commits: self.counts.commits.load(Ordering::Relaxed),
        }
    }

    /// The connection, lent inside the current group's transaction under a
    /// savepoint of this unit's own.
    pub(super) async fn begin(&self) -> sqlx::Result<Tx> {
        let (reply, lent) = oneshot::channel();
        self.requests.send(reply).map_err(|_| stopped())?;
        // As long as the pool waited for a connection before: a writer
        // that long behind is overloaded or stuck, and the caller is told
        // rather than kept forever (its place in the queue is given up:
        // the lease, sent to no one, comes straight back).
        let lease = tokio::time::timeout(WAIT, lent)
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
            .map_err(|_| stopped())?
            .map_err(sqlx::Error::Protocol)?;
        Ok(Tx(Inner::Lent(lease)))
    }
}

fn stopped() -> sqlx::Error {
    sqlx::Error::Protocol("the database writer has stopped".into())
}

/// A write transaction: the writer's connection on SQLite, a transaction of
/// the pool on PostgreSQL. Dropped without [`Tx::commit`], it is undone.
#[derive(Debug)]
pub struct Tx(Inner);

#[derive(Debug)]
enum Inner {
    Lent(Lease),
    Pooled(sqlx::Transaction<'static, sqlx::Any>),
}

impl Tx {
    pub(super) fn pooled(tx: sqlx::Transaction<'static, sqlx::Any>) -> Self {
        Self(Inner::Pooled(tx))
    }

    /// Makes this unit's writes durable; returns once they are (on SQLite,
    /// once the group it joined has committed).
    ///
    /// # Errors
    /// When the commit failed: nothing of this unit was written.
    pub async fn commit(self) -> sqlx::Result<()> {
        match self.0 {
            Inner::Pooled(tx) => tx.commit().await,
            Inner::Lent(mut lease) => {
                let (done, committed) = oneshot::channel();
                lease.give_back(Ending::Commit(done));
                committed
                    .await
                    .map_err(|_| stopped())?
                    .map_err(sqlx::Error::Protocol)
            }
        }
    }

    /// Undoes this unit's writes; returns once the group it ran in has
    /// ended, so that what it read of the units before it (a racing
    /// caller's row, say) is then on disk for the pool's readers too.
    ///
    /// # Errors
    /// When that group's transaction was lost: what this unit read of the
    /// others may never have been stored, so a decision made on it (a lost
    /// race, a quota) must not be reported. On PostgreSQL, when the
    /// rollback fails.
    pub async fn rollback(self) -> sqlx::Result<()> {
        match self.0 {
            Inner::Pooled(tx) => tx.rollback().await,
            Inner::Lent(mut lease) => {
                let (done, ended) = oneshot::channel();
                lease.give_back(Ending::Undo(Some(done)));
                ended
                    .await
                    .map_err(|_| stopped())?
                    .map_err(sqlx::Error::Protocol)
            }
        }
    }
}

impl Deref for Tx {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match &self.0 {
            Inner::Lent(lease) => lease.conn.as_ref().expect("lent until given back"),
            Inner::Pooled(tx) => tx,
        }
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Inner::Lent(lease) => lease.conn.as_mut().expect("lent until given back"),
            Inner::Pooled(tx) => tx,
        }
    }
}

/// Told when a unit's group has ended: whether it committed.
type Done = oneshot::Sender<Result<(), String>>;

/// How a unit ended.
enum Ending {
    /// Keep its writes; answer on `done` once they are on disk.
    Commit(Done),
    /// Undo them; answer on `done`, if any, once the group has ended.
    Undo(Option<Done>),
}

impl Ending {
    fn done(self) -> Option<Done> {
        match self {
            Self::Commit(done) => Some(done),
            Self::Undo(done) => done,
        }
    }
}

/// The connection on loan to one unit; given back exactly once, by commit
/// or on drop.
struct Lease {
    conn: Option<AnyConnection>,
    back: Option<oneshot::Sender<(AnyConnection, Ending)>>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lease")
    }
}

impl Lease {
    fn give_back(&mut self, ending: Ending) {
        if let (Some(conn), Some(back)) = (self.conn.take(), self.back.take()) {
            // The actor waits for it; it is gone only if the runtime is.
            let _ = back.send((conn, ending));
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.give_back(Ending::Undo(None));
    }
}

struct Actor {
    /// `None` only while lent.
    conn: Option<AnyConnection>,
    queue: mpsc::UnboundedReceiver<Request>,
    counts: Arc<Counts>,
}

impl Actor {
    async fn run(mut self) {
        let mut carried = None;
        loop {
            let first = match carried.take() {
                Some(unit) => unit,
                None => match self.queue.recv().await {
                    Some(unit) => unit,
                    None => return,
                },
            };
            carried = self.group(first).await;
        }
    }

    /// One transaction: `first`, then whoever queued meanwhile, up to
    /// [`GROUP`] units; each is answered after the commit. Returns a unit
    /// taken from the queue that a lost transaction never let run: it
    /// starts the next group.
    async fn group(&mut self, first: Request) -> Option<Request> {
        if let Err(error) = self.exec("BEGIN IMMEDIATE; SAVEPOINT unit").await {
            let _ = first.send(Err(format!("could not begin a write: {error}")));
            self.abandon().await;
            return None;
        }
        // Told after the commit: those kept, and those undone who wait.
        let mut kept: Vec<Done> = Vec::new();
        let mut undone: Vec<Done> = Vec::new();
        let mut next = Some(first);
        let mut units = 0;
        while let Some(unit) = next.take() {
            units += 1;
            let ending = self.lend(unit).await;
            let more = if units < GROUP {
                self.queue.try_recv().ok()
            } else {
                None
            };
            let step = match (&ending, more.is_some()) {
                (Ending::Commit(_), true) => "RELEASE unit; SAVEPOINT unit",
                (Ending::Commit(_), false) => "RELEASE unit",
                (Ending::Undo(_), true) => "ROLLBACK TO unit; RELEASE unit; SAVEPOINT unit",
                (Ending::Undo(_), false) => "ROLLBACK TO unit; RELEASE unit",
            };
            if let Err(error) = self.exec(step).await {
                // The transaction is gone (SQLite ends it on an I/O error
                // or a full disk): so is every unit kept in it.
                let error = format!("the write was lost: {error}");
                kept.extend(ending.done());
                for done in kept.into_iter().chain(undone) {
                    let _ = done.send(Err(error.clone()));
                }
                self.abandon().await;
                return more;
            }
            match ending {
                Ending::Commit(done) => kept.push(done),
                Ending::Undo(done) => undone.extend(done),
            }
            next = more;
        }
        let committed = self.exec("COMMIT").await;
        let answer = committed.map_err(|e| format!("the commit failed: {e}"));
        if answer.is_err() {
            self.abandon().await;
        } else {
            self.counts.commits.fetch_add(1, Ordering::Relaxed);
            self.counts
                .units
                .fetch_add(kept.len() as u64, Ordering::Relaxed);
        }
        for done in kept.into_iter().chain(undone) {
            let _ = done.send(answer.clone());
        }
        None
    }

    /// Lends the connection to `unit` and waits for it back.
    async fn lend(&mut self, unit: Request) -> Ending {
        let (back, returned) = oneshot::channel();
        let lease = Lease {
            conn: self.conn.take(),
            back: Some(back),
        };
        // A caller already gone drops the lease, which gives it back.
        let _ = unit.send(Ok(lease));
        // A lease gives its connection back exactly once, on commit or on
        // drop; only a lease leaked on purpose would never.
        let (conn, ending) = returned
            .await
            .unwrap_or_else(|_| unreachable!("a lease gives back"));
        self.conn = Some(conn);
        ending
    }

    async fn exec(&mut self, sql: &'static str) -> sqlx::Result<()> {
        let conn = self.conn.as_mut().ok_or_else(stopped)?;
        conn.execute(sql).await.map(|_| ())
    }

    /// Leaves no transaction open after a failure.
    async fn abandon(&mut self) {
        if let Err(error) = self.exec("ROLLBACK").await {
            tracing::debug!(%error, "no transaction to roll back");
        }
    }
}
