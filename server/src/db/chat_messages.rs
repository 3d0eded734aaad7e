//! Chat messages (migration `0016_chat_messages`, issue 28): which Slack or
//! Telegram message stands for a bundle in each chat, and the signed
//! requests already taken.

use sqlx::{AnyConnection, AnyExecutor};

/// Keeps `message_ref` as `pending_id`'s message in `target` (the first
/// kept stays: a retried post must not orphan the message it updates).
///
/// # Errors
/// Database errors.
pub async fn keep(
    db: &mut AnyConnection,
    pending_id: &str,
    target: &str,
    message_ref: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO chat_messages (pending_id, target, message_ref, created_at) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (pending_id, target) DO NOTHING",
    )
    .bind(pending_id)
    .bind(target)
    .bind(message_ref)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// `pending_id`'s message in `target`, if one was sent.
///
/// # Errors
/// Database errors.
pub async fn of(
    db: impl AnyExecutor<'_>,
    pending_id: &str,
    target: &str,
) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(
        "SELECT message_ref FROM chat_messages WHERE pending_id = $1 AND target = $2",
    )
    .bind(pending_id)
    .bind(target)
    .fetch_optional(db)
    .await
}

/// The bundle whose message in `target` is `message_ref`, if any.
///
/// # Errors
/// Database errors.
pub async fn pending_of(
    db: impl AnyExecutor<'_>,
    target: &str,
    message_ref: &str,
) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar(
        "SELECT pending_id FROM chat_messages WHERE target = $1 AND message_ref = $2",
    )
    .bind(target)
    .bind(message_ref)
    .fetch_optional(db)
    .await
}

/// Whether `request_key` was recorded by [`first_time`] and not forgotten
/// yet: a Slack press already answered, redelivered (issue 48 item 1),
/// is looked up first and recorded only once it went through the claim.
///
/// # Errors
/// Database errors.
pub async fn remembered(db: impl AnyExecutor<'_>, request_key: &str) -> sqlx::Result<bool> {
    sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM chat_replays WHERE request_key = $1")
        .bind(request_key)
        .fetch_one(db)
        .await
        .map(|n| n > 0)
}

/// Records a signed request as taken; `false` when it was already (a
/// replay). Records of the same kind (the key up to its first `:`, such as
/// `slack:`) older than `forget_before` are dropped on the way: each kind
/// keeps its own window, so a short one never forgets another's keys.
///
/// # Errors
/// Database errors.
pub async fn first_time(
    db: &crate::db::Db,
    request_key: &str,
    now: i64,
    forget_before: i64,
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    let kind = request_key.split_inclusive(':').next().unwrap_or_default();
    // Kinds are plain words before the colon: nothing in them is a LIKE
    // wildcard but `_`, which matches itself too.
    sqlx::query("DELETE FROM chat_replays WHERE seen_at < $1 AND request_key LIKE $2")
        .bind(forget_before)
        .bind(format!("{kind}%"))
        .execute(&mut *tx)
        .await?;
    let new = sqlx::query(
        "INSERT INTO chat_replays (request_key, seen_at) VALUES ($1, $2) \
         ON CONFLICT (request_key) DO NOTHING",
    )
    .bind(request_key)
    .bind(now)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    tx.commit().await?;
    Ok(new)
}
