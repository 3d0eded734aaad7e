//! The Activity page's one read (issue 49 item 2): every bundle asked in a
//! span, newest first and at most a cap, each as the few facts the figures
//! are made of — never its texts. Only bundles on tasks the reader may see
//! (L1c) unless they are an admin.

use sqlx::AnyExecutor;

use super::Backend;
use super::audit::{asked_in_span, visible_to};

/// One bundle asked, as the figures read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asked {
    /// When it was asked (microseconds, D1).
    pub created_at: i64,
    /// When its row last changed: when it was settled, once it is.
    pub updated_at: i64,
    /// Its status's wire spelling (`""` is pending, D3).
    pub status: String,
    /// Who won, `""` while nobody has.
    pub by_user: String,
    /// Through which channel (`browser`, `slack`, …), `""` while nobody has.
    pub by_channel: String,
    /// Its task (M5) and the task's title.
    pub task_id: String,
    pub task_title: String,
    /// The session whose agent asked, and what it says it is.
    pub session_id: String,
    pub session_description: String,
}

super::row::from_row!(Asked {
    created_at,
    updated_at,
    status,
    by_user,
    by_channel,
    task_id,
    task_title,
    session_id,
    session_description,
});

/// The bundles asked at or after `since` (microseconds) that `user` may
/// see (everything for `None`), newest first, at most `cap`.
///
/// # Errors
/// Database errors.
pub async fn asked_since(
    db: impl AnyExecutor<'_>,
    backend: Backend,
    user: Option<&str>,
    since: i64,
    cap: i64,
) -> sqlx::Result<Vec<Asked>> {
    let sql = asked_since_sql(backend, user.is_some());
    sqlx::query_as(super::sql(sql))
        .bind(user.unwrap_or_default())
        .bind(since)
        .bind(i64::MAX)
        .bind(cap)
        .fetch_all(db)
        .await
}

/// The read of [`asked_since`] (for its plan to be checked): `$1` the
/// user (read only when `scoped`), `$2` since, `$3` until, `$4` the cap.
#[must_use]
pub fn asked_since_sql(backend: Backend, scoped: bool) -> String {
    let user = if scoped { Some("") } else { None };
    format!(
        "SELECT m.created_at, m.updated_at, m.clarification_status AS status, \
         {} AS by_user, {} AS by_channel, t.id AS task_id, t.title AS task_title, \
         s.id AS session_id, s.description AS session_description {} \
         ORDER BY m.created_at DESC, m.pending_id DESC LIMIT $4",
        backend.metadata_text("m", "answered_by", "user"),
        backend.metadata_text("m", "answered_by", "channel"),
        asked_in_span(&visible_to(user), "TRUE"),
    )
}
