//! The pending-question listing (`list_pending_questions_kandev`, L1–L16):
//! one keyset-paged query in which activeness (D4), visibility (L1c), the
//! filters and the L16 exclusion are all predicates, applied before the
//! limit (L1a). It walks the partial index of open questions in page order
//! and stops at the limit, so its cost follows the page, neither the size
//! of the history nor the length of the queue.

use clarify_core::Cursor;
use sqlx::AnyExecutor;

use super::Backend;
use super::clarification::active;
use super::messages::CLARIFICATION_REQUEST;

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct PendingQuery<'a> {
    /// The user whose visibility applies; `None` for an unscoped caller.
    pub user: Option<&'a str>,
    /// Only bundles whose task is in this workspace (L7, L7a).
    pub workspace_id: Option<&'a str>,
    /// Only bundles created at or after this time, in microseconds (L8).
    pub created_since: Option<i64>,
    /// Only bundles strictly after this position (L9).
    pub after: Option<&'a Cursor>,
    /// At most this many (L10: already clamped).
    pub limit: u32,
}

/// One listed bundle's keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingKey {
    /// The bundle.
    pub pending_id: String,
    /// Its task, resolved per M5.
    pub task_id: String,
    /// Its D1 creation time.
    pub created_at: i64,
}

super::row::from_row!(PendingKey {
    pending_id,
    task_id,
    created_at
});

/// The SQL of [`page`] for `query` (parameters `$1`–`$6`: user, workspace,
/// created_since, cursor time, cursor id, limit + 1). Public so tests can
/// ask the database how it runs it.
#[must_use]
pub fn page_sql(backend: Backend, query: &PendingQuery<'_>) -> String {
    let visible = if query.user.is_some() {
        super::visibility::visible_task("t", "$1")
    } else {
        "$1 = $1".to_owned()
    };
    let workspace = if query.workspace_id.is_some() {
        "t.workspace_id = $2"
    } else {
        "$2 = $2"
    };
    let since = if query.created_since.is_some() {
        "m.created_at >= $3"
    } else {
        "$3 = $3"
    };
    // The first term bounds the index range; the second breaks ties.
    let after = if query.after.is_some() {
        "m.created_at >= $4 AND (m.created_at > $4 OR m.pending_id > $5)"
    } else {
        "($4 = $4 AND $5 = $5)"
    };
    // Each bundle is listed through its first question's row (the earliest,
    // lowest id among equals), whose time is the bundle's D1 creation
    // time: so the walk follows the open-questions index in L6 order and
    // stops at the limit, costing a page whatever the queue's length.
    format!(
        "SELECT m.pending_id, t.id AS task_id, m.created_at \
         FROM task_session_messages m {hint} \
         JOIN task_sessions s ON s.id = m.task_session_id \
         JOIN tasks t ON t.id = CASE WHEN m.task_id <> '' THEN m.task_id ELSE s.task_id END \
         WHERE {active} AND {visible} AND {workspace} AND {since} AND {after} \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages r WHERE r.pending_id = m.pending_id \
             AND r.type = '{CLARIFICATION_REQUEST}' \
             AND (r.created_at < m.created_at OR (r.created_at = m.created_at AND r.id < m.id))) \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages q WHERE q.pending_id = m.pending_id \
             AND q.type = '{CLARIFICATION_REQUEST}' AND q.clarification_question_id = '') \
         ORDER BY m.created_at, m.pending_id LIMIT $6",
        active = active("m"),
        hint = backend.open_questions_index_hint(),
    )
}

/// One page of pending bundle keys in L6 order, plus whether more exist.
///
/// # Errors
/// Database errors.
pub async fn page(
    db: impl AnyExecutor<'_>,
    backend: Backend,
    query: &PendingQuery<'_>,
) -> sqlx::Result<(Vec<PendingKey>, bool)> {
    let mut rows: Vec<PendingKey> = sqlx::query_as(super::sql(page_sql(backend, query)))
        .bind(query.user.unwrap_or_default())
        .bind(query.workspace_id.unwrap_or_default())
        .bind(query.created_since.unwrap_or_default())
        .bind(query.after.map_or(0, |c| c.created_at))
        .bind(query.after.map_or("", |c| c.id.as_str()))
        .bind(i64::from(query.limit) + 1)
        .fetch_all(db)
        .await?;
    let more = rows.len() > query.limit as usize;
    rows.truncate(query.limit as usize);
    Ok((rows, more))
}
