//! The connections that read (issue 31). On SQLite they are a fixed set,
//! opened `query_only` and lent one statement at a time without sqlx's
//! pool: its pool pings a connection every time it is given back (from a
//! task of its own, one more hand-off to the connection's thread for each
//! read), which a local file never needs. On PostgreSQL, whose connections
//! can break, the reader is sqlx's pool.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream, StreamExt as _, TryStreamExt as _};
use sqlx::any::{AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Either, Error, Execute, Executor, SqlStr};
use tokio::sync::{Semaphore, SemaphorePermit};

/// How long a read waits for a connection at most.
const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads: `db.pool()` is an executor like a pool, for reads only.
pub struct Reader(Inner);

enum Inner {
    Pool(AnyPool),
    Lent(Lender),
}

/// SQLite's readers: each connection lent to one statement at a time.
struct Lender {
    free: Mutex<Vec<AnyConnection>>,
    permits: Semaphore,
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Pool(pool) => pool.fmt(f),
            Inner::Lent(lender) => f
                .debug_struct("Reader")
                .field("connections", &lender.permits.available_permits())
                .finish(),
        }
    }
}

impl Reader {
    pub(super) fn pool(pool: AnyPool) -> Self {
        Self(Inner::Pool(pool))
    }

    /// Readers over `connections`, each already set up (`query_only`).
    pub(super) fn lending(connections: Vec<AnyConnection>) -> Self {
        let permits = Semaphore::new(connections.len());
        Self(Inner::Lent(Lender {
            free: Mutex::new(connections),
            permits,
        }))
    }

    /// The pool, where there is one (PostgreSQL).
    pub(super) fn as_pool(&self) -> Option<&AnyPool> {
        match &self.0 {
            Inner::Pool(pool) => Some(pool),
            Inner::Lent(_) => None,
        }
    }

    /// One connection, for several reads in a row.
    ///
    /// # Errors
    /// When none can be had.
    pub async fn acquire(&self) -> Result<ReadConnection<'_>, Error> {
        match &self.0 {
            Inner::Pool(pool) => Ok(ReadConnection::Pooled(pool.acquire().await?)),
            Inner::Lent(lender) => lender.lend().await.map(ReadConnection::Lent),
        }
    }
}

impl Lender {
    async fn lend(&self) -> Result<Lent<'_>, Error> {
        // As long as sqlx's pool waited: past that the server is
        // overloaded, and the caller is told rather than kept.
        let permit = tokio::time::timeout(WAIT, self.permits.acquire())
            .await
            .map_err(|_| Error::PoolTimedOut)?
            .map_err(|_| Error::PoolClosed)?;
        let conn = self
            .free
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .ok_or(Error::PoolClosed)?;
        Ok(Lent {
            conn: Some(conn),
            free: &self.free,
            _permit: permit,
        })
    }
}

/// A reading connection on loan; back to the set when dropped. A read
/// cancelled halfway needs nothing more: sqlx's SQLite worker resets the
/// statement when its result channel closes, before the next one runs.
pub struct Lent<'a> {
    conn: Option<AnyConnection>,
    free: &'a Mutex<Vec<AnyConnection>>,
    _permit: SemaphorePermit<'a>,
}

impl Deref for Lent<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        self.conn.as_ref().expect("lent until dropped")
    }
}

impl DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("lent until dropped")
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.free
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(conn);
        }
    }
}

/// [`Reader::acquire`]'s connection.
pub enum ReadConnection<'a> {
    /// From sqlx's pool.
    Pooled(PoolConnection<Any>),
    /// One of SQLite's readers.
    Lent(Lent<'a>),
}

impl Deref for ReadConnection<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            Self::Pooled(conn) => conn,
            Self::Lent(lent) => lent,
        }
    }
}

impl DerefMut for ReadConnection<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            Self::Pooled(conn) => conn,
            Self::Lent(lent) => lent,
        }
    }
}

impl<'c> Executor<'c> for &'c Reader {
    type Database = Any;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match &self.0 {
            Inner::Pool(pool) => pool.fetch_many(query),
            // Read whole while the connection is held: the lists read here
            // are bounded pages.
            Inner::Lent(lender) => stream::once(async move {
                let mut lent = lender.lend().await?;
                (&mut *lent).fetch_many(query).try_collect::<Vec<_>>().await
            })
            .map_ok(|items| stream::iter(items.into_iter().map(Ok)))
            .try_flatten()
            .boxed(),
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Option<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match &self.0 {
            Inner::Pool(pool) => pool.fetch_optional(query),
            Inner::Lent(lender) => Box::pin(async move {
                let mut lent = lender.lend().await?;
                (&mut *lent).fetch_optional(query).await
            }),
        }
    }

    fn prepare_with<'e>(
        self,
        sql: SqlStr,
        parameters: &'e [AnyTypeInfo],
    ) -> BoxFuture<'e, Result<AnyStatement, Error>>
    where
        'c: 'e,
    {
        match &self.0 {
            Inner::Pool(pool) => pool.prepare_with(sql, parameters),
            Inner::Lent(lender) => Box::pin(async move {
                let mut lent = lender.lend().await?;
                (&mut *lent).prepare_with(sql, parameters).await
            }),
        }
    }
}
