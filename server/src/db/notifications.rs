//! Notifications (migration `0010_notifications`): each workspace's own
//! webhook, and the outbox of notices every replica delivers from.

use sqlx::{AnyConnection, AnyExecutor};

/// The webhook `workspace_id`'s owner set, if any.
///
/// # Errors
/// Database errors.
pub async fn workspace_webhook(
    db: impl AnyExecutor<'_>,
    workspace_id: &str,
) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar("SELECT webhook_url FROM workspace_notify WHERE workspace_id = $1")
        .bind(workspace_id)
        .fetch_optional(db)
        .await
}

/// Sets (or, with `None`, removes) `workspace_id`'s webhook.
///
/// # Errors
/// Database errors.
pub async fn set_workspace_webhook(
    db: &mut AnyConnection,
    workspace_id: &str,
    webhook_url: Option<&str>,
    now: i64,
) -> sqlx::Result<()> {
    let query = match webhook_url {
        Some(url) => sqlx::query(
            "INSERT INTO workspace_notify (workspace_id, webhook_url, updated_at) \
             VALUES ($1, $2, $3) ON CONFLICT (workspace_id) \
             DO UPDATE SET webhook_url = excluded.webhook_url, updated_at = excluded.updated_at",
        )
        .bind(workspace_id)
        .bind(url)
        .bind(now),
        None => {
            sqlx::query("DELETE FROM workspace_notify WHERE workspace_id = $1").bind(workspace_id)
        }
    };
    query.execute(db).await?;
    Ok(())
}

/// A chat in which a workspace's owner may name a channel of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceChat {
    /// Slack (migration 0017).
    Slack,
    /// Discord (migration 0022).
    Discord,
}

impl WorkspaceChat {
    /// The table that keeps it: a constant, never the caller's text.
    const fn table(self) -> &'static str {
        match self {
            Self::Slack => "workspace_slack",
            Self::Discord => "workspace_discord",
        }
    }
}

/// The `chat` channel `workspace_id`'s owner set, if any.
///
/// # Errors
/// Database errors.
pub async fn workspace_chat_channel(
    db: impl AnyExecutor<'_>,
    chat: WorkspaceChat,
    workspace_id: &str,
) -> sqlx::Result<Option<String>> {
    let table = chat.table();
    sqlx::query_scalar(super::sql(format!(
        "SELECT channel FROM {table} WHERE workspace_id = $1"
    )))
    .bind(workspace_id)
    .fetch_optional(db)
    .await
}

/// Sets (or, with `None`, removes) `workspace_id`'s `chat` channel.
///
/// # Errors
/// Database errors.
pub async fn set_workspace_chat_channel(
    db: &mut AnyConnection,
    chat: WorkspaceChat,
    workspace_id: &str,
    channel: Option<&str>,
    now: i64,
) -> sqlx::Result<()> {
    let table = chat.table();
    let query = match channel {
        Some(channel) => sqlx::query(super::sql(format!(
            "INSERT INTO {table} (workspace_id, channel, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (workspace_id) \
             DO UPDATE SET channel = excluded.channel, updated_at = excluded.updated_at"
        )))
        .bind(workspace_id)
        .bind(channel)
        .bind(now),
        None => sqlx::query(super::sql(format!(
            "DELETE FROM {table} WHERE workspace_id = $1"
        )))
        .bind(workspace_id),
    };
    query.execute(db).await?;
    Ok(())
}

/// A notice to deliver to one target.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The row.
    pub id: String,
    /// The webhook's URL.
    pub target: String,
    /// `pending_id:event`, sent as the `Idempotency-Key`.
    pub event_key: String,
    /// The bundle it is about.
    pub pending_id: String,
    /// `waiting`, `resolved`, `expired`, `cancelled` or `reminder`.
    pub event: String,
    /// The JSON body.
    pub body: String,
    /// Attempts made so far.
    pub attempts: i64,
    /// When it is due (a claimed row: when its sender's lease ends).
    pub next_at: i64,
    /// After this, no more attempts.
    pub deadline: i64,
    /// Whose workspace the bundle is in (`""`: unowned, or none), read
    /// with the row and never stored: workspaces' webhooks get a share of
    /// the sends each owner (issue 45 item 7-P5).
    pub owner_id: String,
}

super::row::from_row!(Outgoing {
    id,
    target,
    event_key,
    pending_id,
    event,
    body,
    attempts,
    next_at,
    deadline,
    owner_id
});

/// Queues `row` (its `attempts` and `next_at` as given); `false` when the
/// same notice was already queued for the same target (by this replica or
/// another).
///
/// # Errors
/// Database errors.
pub async fn enqueue(db: &mut AnyConnection, row: &Outgoing, now: i64) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO notification_outbox \
         (id, target, event_key, pending_id, event, body, state, attempts, next_at, deadline, \
          created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, 'queued', 0, $7, $8, $9, $9) \
         ON CONFLICT (target, event_key) DO NOTHING",
    )
    .bind(&row.id)
    .bind(&row.target)
    .bind(&row.event_key)
    .bind(&row.pending_id)
    .bind(&row.event)
    .bind(&row.body)
    .bind(row.next_at)
    .bind(row.deadline)
    .bind(now)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The targets with rows due at `now`, the longest waiting first, at most
/// `limit`.
///
/// # Errors
/// Database errors.
pub async fn due_targets(
    db: impl AnyExecutor<'_>,
    now: i64,
    limit: i64,
) -> sqlx::Result<Vec<String>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(crate::db::sql(due_targets_sql()))
        .bind(now)
        .bind(limit)
        .fetch_all(db)
        .await?;
    Ok(rows.into_iter().map(|(target, _)| target).collect())
}

/// The query of [`due_targets`] (`tests/query_plans.rs` checks it reads
/// the index of queued rows only).
#[must_use]
pub fn due_targets_sql() -> String {
    "SELECT target, MIN(next_at) FROM notification_outbox \
     WHERE state = 'queued' AND next_at <= $1 GROUP BY target ORDER BY 2 LIMIT $2"
        .to_owned()
}

/// `target`'s queued rows due at `now`, soonest first, at most `limit`.
///
/// # Errors
/// Database errors.
pub async fn due_for(
    db: impl AnyExecutor<'_>,
    target: &str,
    now: i64,
    limit: i64,
) -> sqlx::Result<Vec<Outgoing>> {
    sqlx::query_as(crate::db::sql(due_for_sql()))
        .bind(target)
        .bind(now)
        .bind(limit)
        .fetch_all(db)
        .await
}

/// The query of [`due_for`] (`$1` the target, `$2` now, `$3` the limit;
/// migration 0012's index of each target's queued rows answers it).
#[must_use]
pub fn due_for_sql() -> String {
    "SELECT o.id, o.target, o.event_key, o.pending_id, o.event, o.body, o.attempts, \
     o.next_at, o.deadline, COALESCE((SELECT w.owner_id FROM task_session_messages m \
         JOIN task_sessions s ON s.id = m.task_session_id \
         JOIN tasks t ON t.id = s.task_id JOIN workspaces w ON w.id = t.workspace_id \
         WHERE m.pending_id = o.pending_id LIMIT 1), '') AS owner_id \
     FROM notification_outbox o WHERE o.state = 'queued' AND o.target = $1 AND o.next_at <= $2 \
     ORDER BY o.next_at LIMIT $3"
        .to_owned()
}

/// Claims `row` for one attempt until `lease_until`: only when nobody
/// moved it since it was read, so one replica sends each attempt.
///
/// # Errors
/// Database errors.
pub async fn claim(
    db: &mut AnyConnection,
    row: &Outgoing,
    lease_until: i64,
    now: i64,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE notification_outbox SET next_at = $1, attempts = attempts + 1, updated_at = $2 \
         WHERE id = $3 AND state = 'queued' AND next_at = $4",
    )
    .bind(lease_until)
    .bind(now)
    .bind(&row.id)
    .bind(row.next_at)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends `id` in `state` (`delivered`, `failed` or `dropped`).
///
/// # Errors
/// Database errors.
pub async fn finish(db: &mut AnyConnection, id: &str, state: &str, now: i64) -> sqlx::Result<()> {
    sqlx::query("UPDATE notification_outbox SET state = $1, updated_at = $2 WHERE id = $3")
        .bind(state)
        .bind(now)
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Makes `id` due again at `next_at`.
///
/// # Errors
/// Database errors.
pub async fn retry_at(
    db: &mut AnyConnection,
    id: &str,
    next_at: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE notification_outbox SET next_at = $1, updated_at = $2 \
         WHERE id = $3 AND state = 'queued'",
    )
    .bind(next_at)
    .bind(now)
    .bind(id)
    .execute(db)
    .await?;
    Ok(())
}

/// Forgets rows that ended before `before`.
///
/// # Errors
/// Database errors.
pub async fn prune(db: &mut AnyConnection, before: i64) -> sqlx::Result<u64> {
    let done =
        sqlx::query("DELETE FROM notification_outbox WHERE state <> 'queued' AND updated_at < $1")
            .bind(before)
            .execute(db)
            .await?;
    Ok(done.rows_affected())
}
