//! The database: connection, migrations and the repository functions in the
//! submodules. Every function takes an executor, so it runs on the pool or
//! inside a caller's transaction alike.
//!
//! One schema and one set of queries serve SQLite and PostgreSQL through
//! sqlx's `Any` driver; what differs between them lives in [`dialect`].

pub mod answer_links;
pub mod attempts;
pub mod batch;
pub mod chat_messages;
pub mod clarification;
pub mod dialect;
pub mod mcp_owners;
pub mod messages;
pub mod migrations;
pub mod notifications;
pub mod page;
pub mod pending;
pub mod publishing;
pub mod replicas;
pub(crate) mod row;
pub mod sessions;
pub mod tasks;
pub mod turns;
pub mod users;
pub mod visibility;
pub mod workspaces;

use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::{AnyPool, Executor as _};

pub use dialect::Backend;

/// Where `clarify` keeps its data when no URL is given.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://clarify.db?mode=rwc";

/// The shared connection pool and which database it talks to.
#[derive(Debug, Clone)]
pub struct Db {
    pool: AnyPool,
    /// SQLite: the one connection that writes (see [`Db::begin_write`]);
    /// PostgreSQL: the pool.
    writer: AnyPool,
    backend: Backend,
    url: std::sync::Arc<str>,
}

/// A transaction on the shared pool.
pub type Tx = sqlx::Transaction<'static, sqlx::Any>;

impl Db {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) and brings the
    /// schema up to date.
    ///
    /// # Errors
    /// When the URL names no supported database, or connecting or migrating fails.
    pub async fn connect(url: &str) -> Result<Self, sqlx::Error> {
        install_default_drivers();
        let backend = Backend::from_url(url).ok_or_else(|| {
            sqlx::Error::Configuration(
                "database URL must start with sqlite:// or postgres://".into(),
            )
        })?;
        let options = AnyPoolOptions::new()
            .max_connections(backend.max_connections())
            .acquire_timeout(Duration::from_secs(10));
        let options = match backend {
            Backend::Sqlite => options.after_connect(|conn, _meta| {
                Box::pin(async move {
                    // Per connection: SQLite forgets these on every open.
                    conn.execute(
                        "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL;",
                    )
                    .await?;
                    Ok(())
                })
            }),
            Backend::Postgres => options,
        };
        // A user naming a new SQLite file expects it to be created.
        let url = match backend {
            Backend::Sqlite if !url.contains("mode=") => {
                format!("{url}{}mode=rwc", if url.contains('?') { '&' } else { '?' })
            }
            _ => url.to_owned(),
        };
        let pool = options.clone().connect(&url).await?;
        let writer = if backend == Backend::Sqlite {
            // Persistent in the file: readers never block the writer.
            pool.execute("PRAGMA journal_mode = WAL").await?;
            options.max_connections(1).connect(&url).await?
        } else {
            pool.clone()
        };
        let db = Self {
            pool,
            writer,
            backend,
            url: url.into(),
        };
        db.migrate().await?;
        Ok(db)
    }

    async fn migrate(&self) -> Result<(), sqlx::Error> {
        let migrator = match self.backend {
            Backend::Sqlite => migrations::sqlite(),
            Backend::Postgres => migrations::postgres(),
        };
        // sqlx takes an advisory lock on PostgreSQL, so replicas starting at
        // once apply each migration exactly once.
        migrator
            .run(&self.pool)
            .await
            .map_err(|e| sqlx::Error::Migrate(Box::new(e)))
    }

    /// The pool, for single statements.
    #[must_use]
    pub fn pool(&self) -> &AnyPool {
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

    /// The pool for a statement that writes on its own (no transaction).
    #[must_use]
    pub fn writer(&self) -> &AnyPool {
        &self.writer
    }

    /// Begins a transaction that will write. On SQLite it takes the write lock
    /// up front, so a read-then-write transaction cannot fail to upgrade, and
    /// on the one writing connection: SQLite lets one connection write at a
    /// time, and writers queued for that connection are served in turn,
    /// where writers on several connections would poll the lock with
    /// sleeps (its busy handler) and leave it idle between them (issue 17).
    ///
    /// # Errors
    /// When no connection can be had or the transaction cannot start.
    pub async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => self.writer.begin_with("BEGIN IMMEDIATE").await,
            Backend::Postgres => self.pool.begin().await,
        }
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
    let rows: Vec<(String,)> = sqlx::query_as(query).fetch_all(&db.pool).await?;
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
