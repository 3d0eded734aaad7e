//! Which identity opened each MCP session (migration
//! `0005_mcp_session_owners`).

use sqlx::AnyExecutor;

/// The owner recorded for the session hashed to `session_hash`, if any.
///
/// # Errors
/// Database errors.
pub async fn owner(db: impl AnyExecutor<'_>, session_hash: &str) -> sqlx::Result<Option<String>> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT owner FROM mcp_session_owners WHERE session_hash = $1")
            .bind(session_hash)
            .fetch_optional(db)
            .await?;
    Ok(row.map(|(owner,)| owner))
}

/// Records `owner` as the identity that opened the session `session_hash`.
///
/// # Errors
/// Database errors.
pub async fn record(
    db: impl AnyExecutor<'_>,
    session_hash: &str,
    owner: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO mcp_session_owners (session_hash, owner, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (session_hash) DO NOTHING",
    )
    .bind(session_hash)
    .bind(owner)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// Forgets the owners of sessions opened before `cutoff`.
///
/// # Errors
/// Database errors.
pub async fn forget_before(db: impl AnyExecutor<'_>, cutoff: i64) -> sqlx::Result<u64> {
    let done = sqlx::query("DELETE FROM mcp_session_owners WHERE created_at < $1")
        .bind(cutoff)
        .execute(db)
        .await?;
    Ok(done.rows_affected())
}
