//! Users, personal access tokens and browser sessions (auth on only).
//! Every secret is looked up by its hash; none is stored in clear.

use serde::Serialize;
use sqlx::{AnyConnection, AnyExecutor};

use crate::clock;

/// A user.
#[derive(Debug, Clone)]
pub struct User {
    /// Its id (the `owner_id` of its workspaces).
    pub id: String,
    /// Its unique name.
    pub name: String,
    /// When it was created.
    pub created_at: i64,
}

impl From<User> for clarify_core::api::User {
    fn from(u: User) -> Self {
        Self {
            id: u.id,
            name: u.name,
            created_at: clock::rfc3339(u.created_at),
        }
    }
}

/// The user with id `id`.
///
/// # Errors
/// Database errors.
pub async fn by_id(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<Option<User>> {
    sqlx::query_as("SELECT id, name, created_at FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// A personal access token's record (never the token itself).
#[derive(Debug, Clone, Serialize)]
pub struct AccessToken {
    /// Its id, for revocation.
    pub id: String,
    /// Whose it is.
    pub user_id: String,
    /// When it was created.
    #[serde(serialize_with = "clock::as_rfc3339")]
    pub created_at: i64,
    /// When it stops working; `null` for never.
    #[serde(serialize_with = "clock::as_rfc3339_opt")]
    pub expires_at: Option<i64>,
    /// When it was revoked; `null` while valid.
    #[serde(serialize_with = "clock::as_rfc3339_opt")]
    pub revoked_at: Option<i64>,
    /// When it was last used (to within a minute).
    #[serde(serialize_with = "clock::as_rfc3339_opt")]
    pub last_used_at: Option<i64>,
}

/// The user called `name`.
///
/// # Errors
/// Database errors.
pub async fn by_name(db: impl AnyExecutor<'_>, name: &str) -> sqlx::Result<Option<User>> {
    sqlx::query_as("SELECT id, name, created_at FROM users WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await
}

/// Inserts a user.
///
/// # Errors
/// Database errors (a taken name among them).
pub async fn insert(db: &mut AnyConnection, user: &User) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&user.id)
        .bind(&user.name)
        .bind(user.created_at)
        .execute(db)
        .await?;
    Ok(())
}

/// Inserts a token record under the hash of its secret.
///
/// # Errors
/// Database errors.
pub async fn insert_token(
    db: &mut AnyConnection,
    token: &AccessToken,
    hash: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO access_tokens (id, user_id, token_hash, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&token.id)
    .bind(&token.user_id)
    .bind(hash)
    .bind(token.created_at)
    .bind(token.expires_at)
    .execute(db)
    .await?;
    Ok(())
}

/// A valid token, as [`by_token_hash`] finds it.
#[derive(Debug, Clone)]
pub struct ValidToken {
    /// Whose it is.
    pub user: User,
    /// Its id.
    pub token_id: String,
    /// Whether its last use is recorded as over a minute ago (or never):
    /// only then does a use write ([`touch_token`]), so that requests do
    /// not each take the writer.
    pub stale: bool,
}

/// How often a token's use is recorded at most.
const TOUCH_EVERY: i64 = 60_000_000;

/// The user and token id a valid (unrevoked, unexpired) token hash names.
///
/// # Errors
/// Database errors.
pub async fn by_token_hash(
    db: impl AnyExecutor<'_>,
    hash: &str,
    now: i64,
) -> sqlx::Result<Option<ValidToken>> {
    let row: Option<(String, String, i64, String, Option<i64>)> = sqlx::query_as(
        "SELECT u.id, u.name, u.created_at, t.id, t.last_used_at FROM access_tokens t JOIN users u ON u.id = t.user_id \
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)",
    )
    .bind(hash)
    .bind(now)
    .fetch_optional(db)
    .await?;
    Ok(row.map(
        |(id, name, created_at, token_id, last_used_at)| ValidToken {
            user: User {
                id,
                name,
                created_at,
            },
            token_id,
            stale: last_used_at.is_none_or(|at| at < now - TOUCH_EVERY),
        },
    ))
}

/// Records a use of a token, at most once a minute (a write per request
/// would serialize every request behind SQLite's single writer).
///
/// # Errors
/// Database errors.
pub async fn touch_token(db: &mut AnyConnection, token_id: &str, now: i64) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE access_tokens SET last_used_at = $1 WHERE id = $2 \
         AND (last_used_at IS NULL OR last_used_at < $3)",
    )
    .bind(now)
    .bind(token_id)
    .bind(now - TOUCH_EVERY)
    .execute(db)
    .await?;
    Ok(())
}

/// Revokes a token; returns whether it was valid until now.
///
/// # Errors
/// Database errors.
pub async fn revoke_token(db: &mut AnyConnection, token_id: &str, now: i64) -> sqlx::Result<bool> {
    let result = sqlx::query(
        "UPDATE access_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(token_id)
    .execute(db)
    .await?;
    Ok(result.rows_affected() > 0)
}

/// A user's tokens, newest first.
///
/// # Errors
/// Database errors.
pub async fn tokens_of(db: impl AnyExecutor<'_>, user_id: &str) -> sqlx::Result<Vec<AccessToken>> {
    sqlx::query_as(
        "SELECT id, user_id, created_at, expires_at, revoked_at, last_used_at FROM access_tokens \
         WHERE user_id = $1 ORDER BY created_at DESC, id DESC",
    )
    .bind(user_id)
    .fetch_all(db)
    .await
}

/// Inserts a browser session.
///
/// # Errors
/// Database errors.
pub async fn insert_browser_session(
    db: &mut AnyConnection,
    id: &str,
    user_id: &str,
    token_id: Option<&str>,
    secret_hash: &str,
    now: i64,
    expires_at: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO browser_sessions (id, user_id, token_id, secret_hash, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(user_id)
    .bind(token_id)
    .bind(secret_hash)
    .bind(now)
    .bind(expires_at)
    .execute(db)
    .await?;
    Ok(())
}

/// Forgets `user_id`'s browser sessions that expired by `now`, and all but
/// the newest `kept` of the rest (issue 26: logins per user are bounded;
/// the oldest device is logged out, nobody is locked out).
///
/// # Errors
/// Database errors.
pub async fn trim_browser_sessions(
    db: &mut AnyConnection,
    user_id: &str,
    now: i64,
    kept: i64,
) -> sqlx::Result<u64> {
    let done = sqlx::query(
        "DELETE FROM browser_sessions WHERE user_id = $1 AND (expires_at <= $2 OR id NOT IN \
         (SELECT id FROM browser_sessions WHERE user_id = $1 \
          ORDER BY created_at DESC, id DESC LIMIT $3))",
    )
    .bind(user_id)
    .bind(now)
    .bind(kept)
    .execute(db)
    .await?;
    Ok(done.rows_affected())
}

/// The user of a live browser session whose login token is still valid
/// (one signed in through the OpenID provider has none, migration 0025).
///
/// # Errors
/// Database errors.
pub async fn by_browser_secret(
    db: impl AnyExecutor<'_>,
    secret_hash: &str,
    now: i64,
) -> sqlx::Result<Option<User>> {
    let row: Option<(String, String, i64)> = sqlx::query_as(
        "SELECT u.id, u.name, u.created_at FROM browser_sessions b \
         JOIN users u ON u.id = b.user_id LEFT JOIN access_tokens t ON t.id = b.token_id \
         WHERE b.secret_hash = $1 AND b.expires_at > $2 AND (b.token_id IS NULL \
         OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)))",
    )
    .bind(secret_hash)
    .bind(now)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(id, name, created_at)| User {
        id,
        name,
        created_at,
    }))
}

/// Ends a browser session.
///
/// # Errors
/// Database errors.
pub async fn delete_browser_session(db: &mut AnyConnection, secret_hash: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM browser_sessions WHERE secret_hash = $1")
        .bind(secret_hash)
        .execute(db)
        .await?;
    Ok(())
}

super::row::from_row!(User {
    id,
    name,
    created_at
});
super::row::from_row!(AccessToken {
    id,
    user_id,
    created_at,
    expires_at,
    revoked_at,
    last_used_at
});

/// Whether user `id` holds the operator's role (issue 49 item 5).
///
/// # Errors
/// Database errors.
pub async fn is_admin(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<bool> {
    let admin: Option<i64> = sqlx::query_scalar("SELECT admin FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(admin.unwrap_or_default() != 0)
}

/// Gives user `id` the operator's role.
///
/// # Errors
/// Database errors.
pub async fn make_admin(db: &mut AnyConnection, id: &str) -> sqlx::Result<()> {
    sqlx::query("UPDATE users SET admin = 1 WHERE id = $1")
        .bind(id)
        .execute(db)
        .await
        .map(drop)
}
