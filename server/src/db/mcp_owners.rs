//! Which identity opened each MCP session and when it was last used
//! and whose quota it counts against (migrations `0005_mcp_session_owners`,
//! `0006_mcp_session_use`, `0014_quota_holders`).

use sqlx::{AnyConnection, AnyExecutor};

/// The owner recorded for the session hashed to `session_hash`, and when
/// the session was last used, if it is known.
///
/// # Errors
/// Database errors.
pub async fn owner(
    db: impl AnyExecutor<'_>,
    session_hash: &str,
) -> sqlx::Result<Option<(String, i64)>> {
    sqlx::query_as("SELECT owner, last_seen FROM mcp_session_owners WHERE session_hash = $1")
        .bind(session_hash)
        .fetch_optional(db)
        .await
}

/// Records `owner` as the credential that opened the session
/// `session_hash`, counted against `holder`'s quota.
///
/// # Errors
/// Database errors.
pub async fn record(
    db: &mut AnyConnection,
    session_hash: &str,
    owner: &str,
    holder: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO mcp_session_owners (session_hash, owner, holder, created_at, last_seen) \
         VALUES ($1, $2, $4, $3, $3) ON CONFLICT (session_hash) DO NOTHING",
    )
    .bind(session_hash)
    .bind(owner)
    .bind(now)
    .bind(holder)
    .execute(db)
    .await?;
    Ok(())
}

/// Records a use of the session `session_hash` at `now`.
///
/// # Errors
/// Database errors.
pub async fn touch(db: &mut AnyConnection, session_hash: &str, now: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE mcp_session_owners SET last_seen = $1 WHERE session_hash = $2")
        .bind(now)
        .bind(session_hash)
        .execute(db)
        .await?;
    Ok(())
}

/// How many sessions counted against `holder` were used at or after
/// `since`.
///
/// # Errors
/// Database errors.
pub async fn live_count(db: impl AnyExecutor<'_>, holder: &str, since: i64) -> sqlx::Result<i64> {
    let (count,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM mcp_session_owners WHERE holder = $1 AND last_seen >= $2",
    )
    .bind(holder)
    .bind(since)
    .fetch_one(db)
    .await?;
    Ok(count)
}

/// The session counted against `holder` that was used least recently.
///
/// # Errors
/// Database errors.
pub async fn oldest(db: impl AnyExecutor<'_>, holder: &str) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(
        "SELECT session_hash FROM mcp_session_owners WHERE holder = $1 \
         ORDER BY last_seen, created_at LIMIT 1",
    )
    .bind(holder)
    .fetch_optional(db)
    .await
}

/// Forgets the session `session_hash` (it was ended).
///
/// # Errors
/// Database errors.
pub async fn forget(db: &mut AnyConnection, session_hash: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM mcp_session_owners WHERE session_hash = $1")
        .bind(session_hash)
        .execute(db)
        .await?;
    Ok(())
}

/// Forgets the owners of sessions unused since before `cutoff`.
///
/// # Errors
/// Database errors.
pub async fn forget_before(db: &mut AnyConnection, cutoff: i64) -> sqlx::Result<u64> {
    let done = sqlx::query("DELETE FROM mcp_session_owners WHERE last_seen < $1")
        .bind(cutoff)
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
