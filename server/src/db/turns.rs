//! Turns: one stretch of agent work in a session. The newest turn is the
//! current one; a bundle on any older turn is superseded (D4).

use sqlx::{AnyConnection, AnyExecutor};

use super::batch::Batch;
use crate::clock;

/// A turn row.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Its id.
    pub id: String,
    /// The session it belongs to.
    pub task_session_id: String,
    /// When it started.
    pub started_at: i64,
    /// When it completed; `null` while open.
    pub completed_at: Option<i64>,
    /// When the row was written.
    pub created_at: i64,
}

super::row::from_row!(Turn {
    id,
    task_session_id,
    started_at,
    completed_at,
    created_at
});

impl From<Turn> for clarify_core::api::Turn {
    fn from(t: Turn) -> Self {
        Self {
            id: t.id,
            task_session_id: t.task_session_id,
            started_at: clock::rfc3339(t.started_at),
            completed_at: t.completed_at.map(clock::rfc3339),
            created_at: clock::rfc3339(t.created_at),
        }
    }
}

impl Turn {
    /// A new, open turn of `session_id` starting `now`.
    #[must_use]
    pub fn starting(session_id: &str, now: i64) -> Self {
        Self {
            id: crate::ids::new_id(),
            task_session_id: session_id.to_owned(),
            started_at: now,
            completed_at: None,
            created_at: now,
        }
    }
}

/// The current-turn order: newest by `started_at`, then `created_at`, then
/// `id` (DESIGN.md "current turn"). The one definition, used by every query.
pub const CURRENT_TURN_ORDER: &str = "started_at DESC, created_at DESC, id DESC";

const COLUMNS: &str = "id, task_session_id, started_at, completed_at, created_at";

const INSERT: &str = "INSERT INTO task_session_turns \
     (id, task_session_id, started_at, completed_at, created_at) VALUES ($1, $2, $3, $4, $5)";

/// Inserts a turn.
///
/// # Errors
/// Database errors.
pub async fn insert(db: &mut AnyConnection, turn: &Turn) -> sqlx::Result<()> {
    sqlx::query(INSERT)
        .bind(&turn.id)
        .bind(&turn.task_session_id)
        .bind(turn.started_at)
        .bind(turn.completed_at)
        .bind(turn.created_at)
        .execute(db)
        .await?;
    Ok(())
}

/// The session's current turn.
///
/// # Errors
/// Database errors.
pub async fn current(db: impl AnyExecutor<'_>, session_id: &str) -> sqlx::Result<Option<Turn>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_session_turns WHERE task_session_id = $1 \
         ORDER BY {CURRENT_TURN_ORDER} LIMIT 1"
    )))
    .bind(session_id)
    .fetch_optional(db)
    .await
}

/// One turn of a session.
///
/// # Errors
/// Database errors.
pub async fn get(
    db: impl AnyExecutor<'_>,
    session_id: &str,
    id: &str,
) -> sqlx::Result<Option<Turn>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_session_turns WHERE task_session_id = $1 AND id = $2"
    )))
    .bind(session_id)
    .bind(id)
    .fetch_optional(db)
    .await
}

/// Marks a turn completed; returns whether it was open.
///
/// # Errors
/// Database errors.
pub async fn complete(db: &mut AnyConnection, id: &str, now: i64) -> sqlx::Result<bool> {
    let result = sqlx::query(
        "UPDATE task_session_turns SET completed_at = $1 WHERE id = $2 AND completed_at IS NULL",
    )
    .bind(now)
    .bind(id)
    .execute(db)
    .await?;
    Ok(result.rows_affected() > 0)
}

/// [`insert`] as a step of a batch.
pub fn insert_step(batch: &mut Batch, turn: &Turn) -> usize {
    batch.push(
        INSERT.to_owned(),
        vec![
            turn.id.as_str().into(),
            turn.task_session_id.as_str().into(),
            turn.started_at.into(),
            turn.completed_at.into(),
            turn.created_at.into(),
        ],
    )
}

/// Completes the session's current turn if it is open, as a step of a
/// batch: it changes one row exactly when the turn was open.
pub fn complete_current_step(batch: &mut Batch, session_id: &str, now: i64) -> usize {
    batch.push(
        format!(
            "UPDATE task_session_turns SET completed_at = $1 WHERE id = \
             (SELECT id FROM task_session_turns WHERE task_session_id = $2 \
              ORDER BY {CURRENT_TURN_ORDER} LIMIT 1) AND completed_at IS NULL"
        ),
        vec![now.into(), session_id.into()],
    )
}
