//! The database: connection, migrations and the repository functions in the
//! submodules. Every function takes an executor, so it runs on the pool or
//! inside a caller's transaction alike.
//!
//! One schema and one set of queries serve SQLite and PostgreSQL through
//! sqlx's `Any` driver; what differs between them lives in [`dialect`].

pub mod activity;
pub mod answer_links;
pub mod attempts;
pub mod audit;
pub mod backup;
pub mod batch;
pub mod channel_leases;
pub mod chat_messages;
pub mod clarification;
pub mod declines;
pub mod dialect;
pub mod gauges;
pub mod mcp_owners;
pub mod mcp_tasks;
pub mod messages;
pub mod migrations;
pub mod notifications;
pub mod oidc;
pub mod page;
pub mod pending;
pub mod publishing;
pub mod reader;
pub mod replicas;
pub(crate) mod row;
pub mod server_keys;
pub mod sessions;
pub mod tasks;
pub mod turns;
pub mod users;
pub mod visibility;
pub mod workspaces;
mod writer;

use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyConnection, Connection as _, Executor as _};

pub use dialect::Backend;
pub use reader::Reader;
pub use writer::{Tx, WriteCounts};

/// Where `clarify` keeps its data when no URL is given.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://clarify.db?mode=rwc";

/// The database: a pool that reads and one way to write, kept apart by
/// type (issue 31). [`Db::pool`] is for reads; on SQLite its connections
/// are `query_only`, so a write through it fails instead of bypassing the
/// writer. Every write is a [`Tx`] from [`Db::begin_write`].
#[derive(Debug, Clone)]
pub struct Db {
    pool: std::sync::Arc<Reader>,
    /// SQLite: the one connection that writes, lent unit by unit with
    /// group commit ([`writer`]); PostgreSQL: none, the pool writes.
    writer: Option<writer::Writer>,
    backend: Backend,
    url: std::sync::Arc<str>,
    /// SQLite: the shared lock that says this process has the file open,
    /// so that a restore never replaces it underneath (`backup.rs`).
    _open: Option<std::sync::Arc<std::fs::File>>,
}

/// How SQLite waits for the disk when a transaction commits (`PRAGMA
/// synchronous`, in WAL mode). PostgreSQL keeps its own setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// The log is flushed to disk at every commit: an answer acknowledged
    /// survives a crash of the machine, a power loss included (issue 31).
    #[default]
    Full,
    /// Flushed only at checkpoints: survives a crash of the process, but a
    /// power loss can take the last commits, answers already acknowledged
    /// among them.
    Normal,
}

impl Synchronous {
    /// The writer's pragmas, set on every open: SQLite forgets them.
    fn pragmas(self) -> &'static str {
        match self {
            Self::Full => {
                "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; PRAGMA synchronous = FULL;"
            }
            Self::Normal => {
                "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL;"
            }
        }
    }
}

/// A reading connection's pragmas: `query_only`, so that no write can
/// bypass the writer, not even by mistake.
const READER_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; PRAGMA query_only = ON;";

/// How to open the database.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// SQLite's durability at commit.
    pub synchronous: Synchronous,
}

impl Db {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) with the default
    /// [`Options`] and brings the schema up to date.
    ///
    /// # Errors
    /// When the URL names no supported database, or connecting or migrating fails.
    pub async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        Self::connect_with(url, Options::default()).await
    }

    /// [`Db::connect`] with `options`.
    ///
    /// # Errors
    /// When the URL names no supported database, or connecting or migrating fails.
    pub async fn connect_with(url: &str, options: Options) -> Result<Self, sqlx::Error> {
        let pragmas = options.synchronous.pragmas();
        install_default_drivers();
        let backend = Backend::from_url(url).ok_or_else(|| {
            sqlx::Error::Configuration(
                "database URL must start with sqlite:// or postgres://".into(),
            )
        })?;
        // A user naming a new SQLite file expects it to be created.
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                format!("{url}{}mode=rwc", if url.contains('?') { '&' } else { '?' })
            }
            _ => url.to_owned(),
        };
        // Before the file is opened: a restore under way is never raced.
        let open = match backend {
            Backend::Sqlite => backup::sqlite_path(&url)
                .map(|path| backup::hold_open(&path))
                .transpose()
                .map_err(|e| {
                    sqlx::Error::Configuration(format!("cannot lock the database: {e}").into())
                })?
                .map(std::sync::Arc::new),
            Backend::Postgres => None,
        };
        let options = AnyPoolOptions::new()
            .max_connections(backend.max_connections())
            .acquire_timeout(Duration::from_secs(10));
        let (pool, writer) = match backend {
            Backend::Sqlite => {
                // The writer first: it creates the file, makes it WAL
                // (persistent in the file: readers never block the writer)
                // and migrates it before any reader opens.
                let mut conn = AnyConnection::connect(&url).await?;
                conn.execute(pragmas).await?;
                conn.execute("PRAGMA journal_mode = WAL").await?;
                Self::migrator(backend)
                    .run(&mut conn)
                    .await
                    .map_err(|e| sqlx::Error::Migrate(Box::new(e)))?;
                // Readers outside sqlx's pool (see [`reader`]).
                let mut readers = Vec::new();
                for _ in 0..backend.max_connections() {
                    let mut reader = AnyConnection::connect(&url).await?;
                    reader.execute(READER_PRAGMAS).await?;
                    readers.push(reader);
                }
                (Reader::lending(readers), Some(writer::Writer::start(conn)))
            }
            Backend::Postgres => {
                let pool = options.connect(&url).await?;
                // sqlx takes an advisory lock on PostgreSQL, so replicas
                // starting at once apply each migration exactly once.
                Self::migrator(backend)
                    .run(&pool)
                    .await
                    .map_err(|e| sqlx::Error::Migrate(Box::new(e)))?;
                (Reader::pool(pool), None)
            }
        };
        Ok(Self {
            pool: std::sync::Arc::new(pool),
            writer,
            backend,
            url: url.into(),
            _open: open,
        })
    }

    fn migrator(backend: Backend) -> sqlx::migrate::Migrator {
        match backend {
            Backend::Sqlite => migrations::sqlite(),
            Backend::Postgres => migrations::postgres(),
        }
    }

    /// The pool, for reads (on SQLite it cannot write: see [`Db`]).
    #[must_use]
    pub fn pool(&self) -> &Reader {
        &self.pool
    }

    /// The URL it was opened with (for connections outside the pool, such
    /// as a PostgreSQL listener).
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Which database this is.
    #[must_use]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Begins a unit of work that writes; every write is one, a lone
    /// statement included. On SQLite it runs on the one writing connection
    /// inside a `BEGIN IMMEDIATE` transaction (the write lock taken up
    /// front, so a read-then-write unit cannot fail to upgrade), under a
    /// savepoint of its own, and commits with the units that queued
    /// meanwhile ([`writer`]): SQLite lets one connection write at a time,
    /// and writers on several would poll its lock with sleeps (issue 17).
    ///
    /// # Errors
    /// When no connection can be had or the transaction cannot start.
    pub async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        match &self.writer {
            Some(writer) => writer.begin().await,
            None => {
                let pool = self.pool.as_pool().ok_or(sqlx::Error::PoolClosed)?;
                pool.begin().await.map(Tx::pooled)
            }
        }
    }

    /// [`Db::begin_write`] for a unit whose loss with a crash of PostgreSQL
    /// is made good otherwise (a settle the sweep finishes, a relayed wake
    /// every listener makes good when its link drops): there its commit
    /// does not wait for the disk, set in the trip that begins it (issue
    /// 50). On SQLite it joins the writer's group as any unit does.
    ///
    /// # Errors
    /// When no connection is available.
    pub async fn begin_write_unflushed(&self) -> Result<Tx, sqlx::Error> {
        match (&self.writer, self.backend.commit_without_flush_sql()) {
            (None, Some(unflushed)) => {
                let pool = self.pool.as_pool().ok_or(sqlx::Error::PoolClosed)?;
                pool.begin_with(sql(format!("BEGIN; {unflushed}")))
                    .await
                    .map(Tx::pooled)
            }
            _ => self.begin_write().await,
        }
    }

    /// What the writer has committed so far (SQLite; PostgreSQL commits
    /// on its own and reports zeros).
    #[must_use]
    pub fn write_counts(&self) -> WriteCounts {
        self.writer
            .as_ref()
            .map(writer::Writer::counts)
            .unwrap_or_default()
    }

    /// Runs `unit` as a unit of work ([`Db::begin_write`]) and commits it
    /// if it succeeds: `db.write(async |c| users::touch_token(c, id, now).await)`.
    ///
    /// # Errors
    /// `unit`'s error (its writes undone), or the commit's.
    pub async fn write<T, E>(
        &self,
        unit: impl AsyncFnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<sqlx::Error>,
    {
        let mut tx = self.begin_write().await?;
        let done = unit(&mut tx).await?;
        tx.commit().await?;
        Ok(done)
    }
}

/// The tables of the schema (for structural tests, P1).
///
/// # Errors
/// Database errors.
pub async fn table_names(db: &Db) -> sqlx::Result<Vec<String>> {
    let query = match db.backend {
        Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
        Backend::Postgres => {
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"
        }
    };
    let rows: Vec<(String,)> = sqlx::query_as(query).fetch_all(db.pool()).await?;
    Ok(rows.into_iter().map(|(n,)| n).collect())
}

/// `$from, $from+1, …` for `count` bound values (an `IN (…)` list).
pub(crate) fn placeholders(from: usize, count: usize) -> String {
    (from..from + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Marks a query assembled with `format!` as safe. Every interpolated piece
/// is a constant of this crate (column lists, the active rule, dialect
/// fragments); values always travel as bound parameters.
pub(crate) fn sql(text: String) -> sqlx::AssertSqlSafe<String> {
    sqlx::AssertSqlSafe(text)
}
