//! The audit export's walk (issue 49 item 5): every bundle asked in a span
//! of time, answered or not, in the order it was asked, a page at a time,
//! only those on tasks the reader may see (L1c) unless they are an admin.

use sqlx::AnyExecutor;

use super::messages::CLARIFICATION_REQUEST;
use super::pending::PendingKey;

/// Which bundles a page of the export holds.
#[derive(Debug, Clone)]
pub struct AuditQuery<'a> {
    /// The reader, whose visibility applies; `None` for everything (auth
    /// off, or an admin).
    pub user: Option<&'a str>,
    /// Asked at or after (microseconds).
    pub since: i64,
    /// Asked before (microseconds).
    pub until: i64,
    /// After this bundle (its creation time and id), for the next page.
    pub after: Option<(i64, &'a str)>,
    /// Bundles a page.
    pub limit: i64,
}

/// One page of bundle keys in the order asked, and whether more follow.
///
/// # Errors
/// Database errors.
pub async fn page(
    db: impl AnyExecutor<'_>,
    query: &AuditQuery<'_>,
) -> sqlx::Result<(Vec<PendingKey>, bool)> {
    let sql = page_sql(query.user.is_some(), query.after.is_some());
    let mut rows: Vec<PendingKey> = sqlx::query_as(super::sql(sql))
        .bind(query.user.unwrap_or_default())
        .bind(query.since)
        .bind(query.until)
        .bind(query.after.map_or(0, |a| a.0))
        .bind(query.after.map_or("", |a| a.1))
        .bind(query.limit + 1)
        .fetch_all(db)
        .await?;
    let more = rows.len() > usize::try_from(query.limit).unwrap_or_default();
    rows.truncate(usize::try_from(query.limit).unwrap_or_default());
    Ok((rows, more))
}

/// The read of [`page`] (for its plan to be checked): `$1` the user (read
/// only when `scoped`), `$2` since, `$3` until, `$4` and `$5` the cursor
/// (read only `after` one), `$6` the limit.
#[must_use]
pub fn page_sql(scoped: bool, after: bool) -> String {
    let user = if scoped { Some("") } else { None };
    let after = if after {
        "m.created_at >= $4 AND (m.created_at > $4 OR m.pending_id > $5)"
    } else {
        "($4 = $4 AND $5 = $5)"
    };
    format!(
        "SELECT m.pending_id, t.id AS task_id, m.created_at {} \
         ORDER BY m.created_at, m.pending_id LIMIT $6",
        asked_in_span(&visible_to(user), after)
    )
}

/// `FROM … WHERE …` of every bundle asked in `[$2, $3)` and `visible`
/// (which reads the user as `$1`), one row each, as `m` (its first
/// question's message), `s` (its session) and `t` (its task, resolved per
/// M5), further narrowed by `more`. A bundle is walked through its first
/// question's row, as the pending list walks it (db/pending.rs), so each
/// is one row; the audit export and the Activity page count the same.
pub(super) fn asked_in_span(visible: &str, more: &str) -> String {
    format!(
        "FROM task_session_messages m \
         JOIN task_sessions s ON s.id = m.task_session_id \
         JOIN tasks t ON t.id = CASE WHEN m.task_id <> '' THEN m.task_id ELSE s.task_id END \
         WHERE m.type = '{CLARIFICATION_REQUEST}' \
         AND m.created_at >= $2 AND m.created_at < $3 AND {visible} AND {more} \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages r WHERE r.pending_id = m.pending_id \
             AND r.type = '{CLARIFICATION_REQUEST}' \
             AND (r.created_at < m.created_at OR (r.created_at = m.created_at AND r.id < m.id))) \
         AND NOT EXISTS (SELECT 1 FROM task_session_messages q WHERE q.pending_id = m.pending_id \
             AND q.type = '{CLARIFICATION_REQUEST}' AND q.clarification_question_id = '')"
    )
}

/// The visibility (L1c) of task `t` to the user bound as `$1`, or, for
/// `None` (auth off, or an admin), every task (`$1` still bound).
pub(super) fn visible_to(user: Option<&str>) -> String {
    if user.is_some() {
        super::visibility::visible_task("t", "$1")
    } else {
        "$1 = $1".to_owned()
    }
}
