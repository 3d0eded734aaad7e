//! Backup and restore of a SQLite database (issue 49 item 4): a consistent
//! copy of a running server's file, and putting a copy back where no
//! server runs. PostgreSQL has its own tools (`pg_dump`), which a team
//! running it already uses.
//!
//! A server holds a shared lock on `<file>.lock` for as long as it has the
//! database open; a restore takes it exclusively, so it can never replace
//! a file under a running server, and a crashed server (its lock gone with
//! its process) does not block one.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use sqlx::{AnyConnection, Connection as _};

/// The SQLite file a `sqlite:` URL names (none for an in-memory database).
#[must_use]
pub fn sqlite_path(url: &str) -> Option<PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or_default();
    (!path.is_empty() && path != ":memory:").then(|| PathBuf::from(path))
}

/// The file whose lock says a server has `database` open.
fn lock_file(database: &Path) -> std::io::Result<File> {
    let mut name = database.as_os_str().to_owned();
    name.push(".lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(name))
}

/// Marks `database` as open by this process until the file returned is
/// dropped (or the process ends, however it ends).
///
/// # Errors
/// When the lock file cannot be created or locked.
pub fn hold_open(database: &Path) -> std::io::Result<File> {
    let file = lock_file(database)?;
    file.lock_shared()?;
    Ok(file)
}

/// The schema version a SQLite file carries: its last applied migration.
///
/// # Errors
/// When it is no Clarify database (no migrations table), or unreadable.
pub async fn schema_version(conn: &mut AnyConnection) -> Result<i64, String> {
    sqlx::query_scalar::<_, i64>("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut *conn)
        .await
        .map_err(|_| "it is not a Clarify database (it has no schema version)".to_owned())
}

/// Copies the database at `url` into the new file `to`, consistent as of
/// one instant, while the server goes on writing; returns the copy's
/// schema version.
///
/// # Errors
/// A message for the person: `to` exists, or the copy failed.
pub async fn backup(url: &str, to: &Path) -> Result<i64, String> {
    if to.exists() {
        return Err(format!("{} exists: name a new file", to.display()));
    }
    sqlx::any::install_default_drivers();
    let partial = with_suffix(to, ".partial");
    let _ = std::fs::remove_file(&partial);
    let mut conn = AnyConnection::connect(url)
        .await
        .map_err(|e| format!("cannot open the database: {e}"))?;
    let version = schema_version(&mut conn).await?;
    // One read transaction: the copy is the database as of its start,
    // whatever commits meanwhile.
    sqlx::query("VACUUM INTO $1")
        .bind(partial.to_string_lossy().into_owned())
        .execute(&mut conn)
        .await
        .map_err(|e| format!("cannot copy the database: {e}"))?;
    let _ = conn.close().await;
    // SQLite does not flush what VACUUM INTO writes: a copy announced is
    // on disk, and a half-written one never has the name asked for.
    settle(&partial, to).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    Ok(version)
}

/// Puts the copy `from` in place of the database at `url`, if no server
/// has it open and the copy is a whole Clarify database this binary can
/// run (`known`: its newest schema version); returns the copy's version.
///
/// # Errors
/// A message for the person saying which of these failed.
pub async fn restore(from: &Path, url: &str, known: i64) -> Result<i64, String> {
    let target = sqlite_path(url).ok_or("restore needs a SQLite file (a sqlite:// URL)")?;
    sqlx::any::install_default_drivers();
    let copy_url = format!("sqlite://{}?mode=ro", from.display());
    let mut copy = AnyConnection::connect(&copy_url)
        .await
        .map_err(|e| format!("cannot open {}: {e}", from.display()))?;
    let checked: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut copy)
        .await
        .map_err(|_| format!("{} is not a SQLite database", from.display()))?;
    if checked != "ok" {
        return Err(format!("{} is damaged: {checked}", from.display()));
    }
    let version = schema_version(&mut copy)
        .await
        .map_err(|why| format!("{}: {why}", from.display()))?;
    let _ = copy.close().await;
    if version > known {
        return Err(format!(
            "{} has schema version {version}; this clarify knows up to {known}: restore it with a newer clarify",
            from.display()
        ));
    }
    let lock = lock_file(&target).map_err(|e| format!("cannot lock the database: {e}"))?;
    if lock.try_lock().is_err() {
        return Err(format!(
            "a server has {} open: stop it first, then restore",
            target.display()
        ));
    }
    let staged = with_suffix(&target, ".restoring");
    std::fs::copy(from, &staged).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    // The old file's log would be replayed over the copy: it goes first.
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(&target, suffix));
    }
    settle(&staged, &target).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    drop(lock);
    Ok(version)
}

/// Flushes `from`, renames it to `to` and flushes the folder: all or nothing.
fn settle(from: &Path, to: &Path) -> std::io::Result<()> {
    File::open(from)?.sync_all()?;
    std::fs::rename(from, to)?;
    let folder = to.parent().filter(|p| !p.as_os_str().is_empty());
    File::open(folder.unwrap_or_else(|| Path::new(".")))?.sync_all()
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_url_names_its_file() {
        assert_eq!(
            sqlite_path("sqlite://clarify.db?mode=rwc"),
            Some("clarify.db".into())
        );
        assert_eq!(sqlite_path("sqlite:///var/c.db"), Some("/var/c.db".into()));
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://x/y"), None);
    }
}
