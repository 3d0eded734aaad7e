//! Tasks: the unit of work a human looks at; each has agent sessions.

use serde::Serialize;
use sqlx::{AnyExecutor, FromRow};

use crate::clock;

/// A task row.
#[derive(Debug, Clone, Serialize, FromRow)]
pub struct Task {
    /// Its id.
    pub id: String,
    /// Its workspace; `""` for none (D5). Not a foreign key (L1c).
    pub workspace_id: String,
    /// What the task is.
    pub title: String,
    /// More about it.
    pub description: String,
    /// When it was created.
    #[serde(serialize_with = "clock::as_rfc3339")]
    pub created_at: i64,
    /// When it last changed.
    #[serde(serialize_with = "clock::as_rfc3339")]
    pub updated_at: i64,
}

const COLUMNS: &str = "id, workspace_id, title, description, created_at, updated_at";

/// Inserts a task.
///
/// # Errors
/// Database errors.
pub async fn insert(db: impl AnyExecutor<'_>, task: &Task) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO tasks (id, workspace_id, title, description, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&task.id)
    .bind(&task.workspace_id)
    .bind(&task.title)
    .bind(&task.description)
    .bind(task.created_at)
    .bind(task.updated_at)
    .execute(db)
    .await?;
    Ok(())
}

/// One task.
///
/// # Errors
/// Database errors.
pub async fn get(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<Option<Task>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM tasks WHERE id = $1"
    )))
    .bind(id)
    .fetch_optional(db)
    .await
}

/// Tasks, oldest first; only those of `workspace_id` when given.
///
/// # Errors
/// Database errors.
pub async fn list(db: impl AnyExecutor<'_>, workspace_id: Option<&str>) -> sqlx::Result<Vec<Task>> {
    match workspace_id {
        Some(ws) => {
            sqlx::query_as(super::sql(format!(
                "SELECT {COLUMNS} FROM tasks WHERE workspace_id = $1 ORDER BY created_at, id"
            )))
            .bind(ws)
            .fetch_all(db)
            .await
        }
        None => {
            sqlx::query_as(super::sql(format!(
                "SELECT {COLUMNS} FROM tasks ORDER BY created_at, id"
            )))
            .fetch_all(db)
            .await
        }
    }
}
