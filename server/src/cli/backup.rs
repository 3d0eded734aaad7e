//! `clarify backup FILE` and `clarify restore FILE` (issue 49 item 4): a
//! consistent copy of a running server's SQLite database, and putting one
//! back where no server runs. On PostgreSQL both say to use its own tools.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::DatabaseArgs;
use crate::db::{Backend, backup, migrations};

/// Flags of `clarify backup` and `clarify restore`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The copy: a new file for `backup`, the one to put back for `restore`.
    pub file: PathBuf,
    #[command(flatten)]
    pub database: DatabaseArgs,
}

impl BackupArgs {
    fn url(&self) -> Result<&str, String> {
        let url = self
            .database
            .database_url
            .as_deref()
            .unwrap_or(crate::db::DEFAULT_DATABASE_URL);
        match Backend::from_url(url) {
            Some(Backend::Sqlite) => Ok(url),
            Some(Backend::Postgres) => Err(
                "this database is PostgreSQL: back it up with pg_dump and restore it with pg_restore (or psql)"
                    .to_owned(),
            ),
            None => Err("--database-url must start with sqlite:// or postgres://".to_owned()),
        }
    }
}

/// Runs `clarify backup`.
///
/// # Errors
/// A message for the person.
pub async fn backup(args: BackupArgs) -> Result<(), String> {
    let started = Instant::now();
    let version = backup::backup(args.url()?, &args.file).await?;
    say(&format!(
        "backed up to {} (schema version {version}) in {} ms",
        args.file.display(),
        started.elapsed().as_millis()
    ))
}

/// Runs `clarify restore`.
///
/// # Errors
/// A message for the person.
pub async fn restore(args: BackupArgs) -> Result<(), String> {
    let known = migrations::sqlite()
        .iter()
        .map(|m| m.version)
        .max()
        .unwrap_or_default();
    let version = backup::restore(&args.file, args.url()?, known).await?;
    say(&format!(
        "restored {} (schema version {version}); start the server to use it",
        args.file.display()
    ))
}

fn say(line: &str) -> Result<(), String> {
    writeln!(std::io::stdout(), "{line}").map_err(|e| format!("cannot write to stdout: {e}"))
}
