//! `clarify token create|list|revoke`: personal access tokens for `--auth`,
//! managed on the database directly (no server needed).

use std::io::Write as _;

use clap::Subcommand;

use super::DatabaseArgs;

/// `clarify token …`.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token for a user (created if new); prints the token as the
    /// last line. It is shown only this once.
    Create {
        /// The user's name.
        #[arg(long)]
        user: String,
        /// Make the token expire after this many days (at most 36500).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=36_500))]
        expires_in_days: Option<u32>,
        /// Give the user the operator's role: the audit export shows them
        /// every workspace.
        #[arg(long)]
        admin: bool,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// Revoke a token by its id.
    Revoke {
        /// The token's id (printed by `create` and `list`).
        id: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
    /// List a user's tokens (never the secrets).
    List {
        /// The user's name.
        #[arg(long)]
        user: String,
        #[command(flatten)]
        database: DatabaseArgs,
    },
}

/// Runs `clarify token …`.
///
/// # Errors
/// A message for the user: the database or the token could not be had.
pub async fn run(command: TokenCommand) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    let mut say = |line: String| {
        writeln!(stdout, "{line}").map_err(|e| format!("cannot write to stdout: {e}"))
    };
    match command {
        TokenCommand::Create {
            user,
            expires_in_days,
            admin,
            database,
        } => {
            let user = user.trim();
            if user.is_empty() {
                return Err("--user: must not be empty".into());
            }
            let db = database.open().await?;
            let (secret, record) = crate::auth::tokens::create(&db, user, expires_in_days)
                .await
                .map_err(|e| format!("cannot create the token: {e}"))?;
            if admin {
                let id = record.user_id.clone();
                db.write(async |c| crate::db::users::make_admin(c, &id).await)
                    .await
                    .map_err(|e| format!("cannot make {user} an admin: {e}"))?;
                say(format!(
                    "{user} is an admin: the audit export shows every workspace"
                ))?;
            }
            say(format!(
                "token id {} for user {user} (shown once, keep it secret):",
                record.id
            ))?;
            // Last line: scripts take the token from here.
            say(secret)
        }
        TokenCommand::Revoke { id, database } => {
            let db = database.open().await?;
            let revoked = db
                .write(async |c| {
                    crate::db::users::revoke_token(c, &id, crate::clock::now_micros()).await
                })
                .await
                .map_err(|e| format!("cannot revoke: {e}"))?;
            if revoked {
                say(format!("revoked {id}"))
            } else {
                Err(format!("no valid token with id {id}"))
            }
        }
        TokenCommand::List { user, database } => {
            let db = database.open().await?;
            let found = crate::db::users::by_name(db.pool(), &user)
                .await
                .map_err(|e| format!("cannot read users: {e}"))?
                .ok_or_else(|| format!("no user named {user}"))?;
            let tokens = crate::db::users::tokens_of(db.pool(), &found.id)
                .await
                .map_err(|e| format!("cannot read tokens: {e}"))?;
            for t in tokens {
                let state = if t.revoked_at.is_some() {
                    "revoked"
                } else {
                    "valid"
                };
                say(format!(
                    "{} {state} created {}",
                    t.id,
                    crate::clock::rfc3339(t.created_at)
                ))?;
            }
            Ok(())
        }
    }
}
