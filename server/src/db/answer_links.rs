//! Answer links (migration `0015_answer_links`, issue 28): one option of
//! one bundle, carried by one notice target, found by its token's hash.

use sqlx::{AnyConnection, AnyExecutor};

/// What an answer link answers, and who carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerLink {
    /// The bundle.
    pub pending_id: String,
    /// The option it chooses.
    pub option_id: String,
    /// The notice target that carried it (`ntfy`, a webhook's host,
    /// `stream`): the answer's `answered_by.client`.
    pub client: String,
}

super::row::from_row!(AnswerLink {
    pending_id,
    option_id,
    client
});

/// Stores a link under its token's hash.
///
/// # Errors
/// Database errors.
pub async fn insert(
    db: &mut AnyConnection,
    token_hash: &str,
    link: &AnswerLink,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO answer_links (token_hash, pending_id, option_id, client, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(token_hash)
    .bind(&link.pending_id)
    .bind(&link.option_id)
    .bind(&link.client)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// The link stored under `token_hash`, if any.
///
/// # Errors
/// Database errors.
pub async fn by_hash(
    db: impl AnyExecutor<'_>,
    token_hash: &str,
) -> sqlx::Result<Option<AnswerLink>> {
    sqlx::query_as("SELECT pending_id, option_id, client FROM answer_links WHERE token_hash = $1")
        .bind(token_hash)
        .fetch_optional(db)
        .await
}

/// How many links a bundle has (minting stops at a bound: a follower of
/// the stream reconnecting in a loop must not grow the table without end).
///
/// # Errors
/// Database errors.
pub async fn count_of(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT COUNT(*) FROM answer_links WHERE pending_id = $1")
        .bind(pending_id)
        .fetch_one(db)
        .await
}
