//! One fresh database per test: a SQLite file in a folder of its own, or,
//! when `CLARIFY_TEST_POSTGRES_URL` names a PostgreSQL server, a new
//! database there. `scripts/test` runs the black-box suite both ways.

use std::path::{Path, PathBuf};

use clarify_server::db::Backend;
use sqlx::{Connection as _, Executor as _};

/// The variable naming the PostgreSQL server to test against (any database
/// on it the user may connect to; new ones are created beside it).
pub const POSTGRES_ENV: &str = "CLARIFY_TEST_POSTGRES_URL";

/// A database created for one test, and deleted when it is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    dir: PathBuf,
    /// The PostgreSQL server and the database's name there.
    postgres: Option<(String, String)>,
}

impl TestDatabase {
    /// Creates it: empty, not yet migrated.
    ///
    /// # Panics
    /// When the folder or the PostgreSQL database cannot be created.
    pub async fn create() -> Self {
        let name = unique_name();
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir).expect("temp dir");
        match std::env::var(POSTGRES_ENV) {
            Ok(server) => Self {
                url: create_postgres_database(&server, &name).await,
                dir,
                postgres: Some((server, name)),
            },
            Err(_) => Self {
                url: format!("sqlite://{}", dir.join("clarify.db").display()),
                dir,
                postgres: None,
            },
        }
    }

    /// Its URL, as `--database-url` takes it.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Which database this run tests.
    #[must_use]
    pub fn backend(&self) -> Backend {
        Backend::from_url(&self.url).expect("a known scheme")
    }

    /// A folder of this test's own (the SQLite files live here).
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some((server, name)) = self.postgres.take() {
            drop_postgres_database(server, name);
        }
    }
}

/// Whether this run tests PostgreSQL.
#[must_use]
pub fn testing_postgres() -> bool {
    std::env::var_os(POSTGRES_ENV).is_some()
}

async fn create_postgres_database(server: &str, name: &str) -> String {
    let mut admin = sqlx::PgConnection::connect(server)
        .await
        .unwrap_or_else(|e| panic!("connect to {POSTGRES_ENV}: {e}"));
    // `name` is ours: letters, digits and underscores.
    admin
        .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .await
        .expect("create a test database");
    admin.close().await.expect("disconnect");
    let mut url = reqwest::Url::parse(server).expect("a URL");
    url.set_path(name);
    url.to_string()
}

/// Deletes a test's database, so that a run of the whole suite holds one
/// database at a time per running test rather than one per test (each is
/// ~8 MB on disk plus its WAL). Best effort: a database left behind only
/// costs space in a throw-away cluster.
fn drop_postgres_database(server: String, name: String) {
    // Drop runs inside the test's runtime, which must not block on itself;
    // the server under test may still hold connections, hence FORCE.
    let _ = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async {
            let mut admin = sqlx::PgConnection::connect(&server).await.ok()?;
            admin
                .execute(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
                )))
                .await
                .ok()?;
            admin.close().await.ok()
        })
    })
    .join();
}

/// Unique across the test binaries running at once and across runs.
fn unique_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "clarify_test_{}_{}_{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
