//! Keys the server signs with, made once per database (issue 30).

use sqlx::AnyConnection;

/// The key named `name`: the one stored, or `fresh` stored now when there
/// is none. Replicas racing to make it all read the one that won.
///
/// # Errors
/// Database errors.
pub async fn get_or_insert(
    db: &mut AnyConnection,
    name: &str,
    fresh: &str,
    now: i64,
) -> sqlx::Result<String> {
    sqlx::query(
        "INSERT INTO server_keys (name, secret, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(fresh)
    .bind(now)
    .execute(&mut *db)
    .await?;
    let (secret,): (String,) = sqlx::query_as("SELECT secret FROM server_keys WHERE name = $1")
        .bind(name)
        .fetch_one(&mut *db)
        .await?;
    Ok(secret)
}
