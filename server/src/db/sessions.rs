//! Agent sessions: one agent working on a task, its state and how to resume it.

use sqlx::{AnyConnection, AnyExecutor};

use clarify_core::SessionState;

use super::batch::Batch;
use super::{Backend, Tx};
use crate::clock;

/// The terminal states as an SQL list, for the active rule (D4): spelled
/// from [`SessionState`], never restated.
#[must_use]
pub fn terminal_states_sql() -> String {
    let terminal: Vec<String> = SessionState::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .map(|s| format!("'{}'", s.as_str()))
        .collect();
    format!("({})", terminal.join(", "))
}

/// A session row (the agent token's hash is never read back out).
#[derive(Debug, Clone)]
pub struct Session {
    /// Its id.
    pub id: String,
    /// The task it works on.
    pub task_id: String,
    /// Its state.
    pub state: SessionState,
    /// JSON of the resume target, `""` when none.
    pub resume_target: String,
    /// What it is, in words (`""` when not said).
    pub description: String,
    /// The user whose request created it (`""` with auth off): its agent
    /// counts against that user's quotas (issue 26).
    pub created_by: String,
    /// When it was created.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

impl From<Session> for clarify_core::api::Session {
    fn from(s: Session) -> Self {
        Self {
            id: s.id,
            task_id: s.task_id,
            state: s.state,
            description: s.description,
            created_at: clock::rfc3339(s.created_at),
            updated_at: clock::rfc3339(s.updated_at),
        }
    }
}

impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for Session {
    fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
        use sqlx::Row as _;
        Ok(Self {
            id: row.try_get("id")?,
            task_id: row.try_get("task_id")?,
            state: super::row::parsed(row, "state")?,
            resume_target: row.try_get("resume_target")?,
            description: row.try_get("description")?,
            created_by: row.try_get("created_by")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

const COLUMNS: &str =
    "id, task_id, state, resume_target, description, created_by, created_at, updated_at";

/// Inserts a session with the hash of its agent token.
///
/// # Errors
/// Database errors.
pub async fn insert(
    db: &mut AnyConnection,
    session: &Session,
    agent_token_hash: &str,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO task_sessions (id, task_id, state, agent_token_hash, resume_target, description, created_by, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(&session.id)
    .bind(&session.task_id)
    .bind(session.state.as_str())
    .bind(agent_token_hash)
    .bind(&session.resume_target)
    .bind(&session.description)
    .bind(&session.created_by)
    .bind(session.created_at)
    .bind(session.updated_at)
    .execute(db)
    .await?;
    Ok(())
}

/// [`insert`], unless the session's creator holds `limit` open
/// (non-terminal) sessions already (issue 26, `--max-open-sessions`):
/// returns whether it was inserted. Counted and inserted in one write
/// transaction, so concurrent creations cannot pass the limit together.
///
/// # Errors
/// Database errors.
pub async fn insert_within(
    db: &super::Db,
    session: &Session,
    agent_token_hash: &str,
    limit: usize,
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    if let Some(lock) = db.backend().lock_key_sql() {
        sqlx::query(lock)
            .bind(format!("open sessions of {}", session.created_by))
            .execute(&mut *tx)
            .await?;
    }
    let open = open_count(&mut *tx, &session.created_by).await?;
    if usize::try_from(open).unwrap_or(usize::MAX) >= limit {
        tx.rollback().await?;
        return Ok(false);
    }
    insert(&mut tx, session, agent_token_hash).await?;
    tx.commit().await?;
    Ok(true)
}

/// How many sessions `created_by` created that have not ended.
///
/// # Errors
/// Database errors.
pub async fn open_count(db: impl AnyExecutor<'_>, created_by: &str) -> sqlx::Result<i64> {
    let (count,): (i64,) = sqlx::query_as(super::sql(open_count_sql()))
        .bind(created_by)
        .fetch_one(db)
        .await?;
    Ok(count)
}

/// The query of [`open_count`] (its plan is pinned in `query_plans.rs`).
#[must_use]
pub fn open_count_sql() -> String {
    format!(
        "SELECT COUNT(*) FROM task_sessions WHERE created_by = $1 AND state NOT IN {}",
        terminal_states_sql()
    )
}

/// How many questions are open (active, D4) in the sessions `created_by`
/// created that have not ended (issue 45 item 7-P4): the user's sessions
/// through `task_sessions_created_by`, each one's open questions through
/// its partial index, never a session's history.
///
/// # Errors
/// Database errors.
pub async fn open_questions(db: impl AnyExecutor<'_>, created_by: &str) -> sqlx::Result<i64> {
    let (count,): (i64,) = sqlx::query_as(super::sql(open_questions_sql()))
        .bind(created_by)
        .fetch_one(db)
        .await?;
    Ok(count)
}

/// The query of [`open_questions`] (`$1` the user).
#[must_use]
pub fn open_questions_sql() -> String {
    format!(
        "SELECT COUNT(*) FROM task_sessions us \
         JOIN task_session_messages m ON m.task_session_id = us.id \
         WHERE us.created_by = $1 AND us.state NOT IN {} AND {}",
        terminal_states_sql(),
        super::clarification::active("m")
    )
}

/// One session.
///
/// # Errors
/// Database errors.
pub async fn get(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<Option<Session>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_sessions WHERE id = $1"
    )))
    .bind(id)
    .fetch_optional(db)
    .await
}

/// [`get`] inside a write transaction, holding the session's row until it
/// ends: whatever this transaction adds to the session cannot interleave
/// with another replica ending it.
///
/// # Errors
/// Database errors.
pub async fn lock(tx: &mut Tx, backend: Backend, id: &str) -> sqlx::Result<Option<Session>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_sessions WHERE id = $1{}",
        backend.for_update()
    )))
    .bind(id)
    .fetch_optional(&mut **tx)
    .await
}

/// The session an agent token belongs to.
///
/// # Errors
/// Database errors.
pub async fn by_agent_token_hash(
    db: impl AnyExecutor<'_>,
    hash: &str,
) -> sqlx::Result<Option<Session>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_sessions WHERE agent_token_hash = $1"
    )))
    .bind(hash)
    .fetch_optional(db)
    .await
}

/// A task's sessions, oldest (the primary) first.
///
/// # Errors
/// Database errors.
pub async fn for_task(db: impl AnyExecutor<'_>, task_id: &str) -> sqlx::Result<Vec<Session>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_sessions WHERE task_id = $1 ORDER BY created_at, id"
    )))
    .bind(task_id)
    .fetch_all(db)
    .await
}

/// The sessions of several tasks in one query, each task's oldest first.
///
/// # Errors
/// Database errors.
pub async fn for_tasks(
    db: impl AnyExecutor<'_>,
    task_ids: &[String],
) -> sqlx::Result<Vec<Session>> {
    if task_ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut query = sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM task_sessions WHERE task_id IN ({}) ORDER BY created_at, id",
        super::placeholders(1, task_ids.len())
    )));
    for id in task_ids {
        query = query.bind(id);
    }
    query.fetch_all(db).await
}

/// Sets a session's state; returns whether the session exists.
///
/// # Errors
/// Database errors.
pub async fn set_state(
    db: &mut AnyConnection,
    id: &str,
    state: SessionState,
    now: i64,
) -> sqlx::Result<bool> {
    let result = sqlx::query("UPDATE task_sessions SET state = $1, updated_at = $2 WHERE id = $3")
        .bind(state.as_str())
        .bind(now)
        .bind(id)
        .execute(db)
        .await?;
    Ok(result.rows_affected() > 0)
}

/// Moves a session from one of `from` to `to` (used to enter and leave
/// `WAITING_FOR_INPUT` without overwriting a terminal state).
///
/// # Errors
/// Database errors.
pub async fn transition(
    db: &mut AnyConnection,
    id: &str,
    from: &[SessionState],
    to: SessionState,
    now: i64,
) -> sqlx::Result<bool> {
    let mut query = sqlx::query(super::sql(transition_sql(from.len())))
        .bind(to.as_str())
        .bind(now)
        .bind(id);
    for state in from {
        query = query.bind(state.as_str());
    }
    Ok(query.execute(db).await?.rows_affected() > 0)
}

/// [`transition`] as a step of a batch; it changes one row exactly when
/// the session moved.
pub fn transition_step(
    batch: &mut Batch,
    id: &str,
    from: &[SessionState],
    to: SessionState,
    now: i64,
) -> usize {
    let mut values = vec![to.as_str().into(), now.into(), id.into()];
    values.extend(from.iter().map(|state| state.as_str().into()));
    batch.push(transition_sql(from.len()), values)
}

/// [`transition`]'s query for `from` states: `$1` the new state, `$2`
/// now, `$3` the session, then one parameter per state it may move from.
fn transition_sql(from: usize) -> String {
    format!(
        "UPDATE task_sessions SET state = $1, updated_at = $2 WHERE id = $3 AND state IN ({})",
        super::placeholders(4, from)
    )
}
