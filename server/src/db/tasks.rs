//! Tasks: the unit of work a human looks at; each has agent sessions.

use sqlx::{AnyConnection, AnyExecutor};

use clarify_core::Cursor;

use crate::clock;

/// A task row.
#[derive(Debug, Clone)]
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
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

super::row::from_row!(Task {
    id,
    workspace_id,
    title,
    description,
    created_at,
    updated_at
});

impl From<Task> for clarify_core::api::Task {
    fn from(t: Task) -> Self {
        Self {
            id: t.id,
            workspace_id: t.workspace_id,
            title: t.title,
            description: t.description,
            created_at: clock::rfc3339(t.created_at),
            updated_at: clock::rfc3339(t.updated_at),
        }
    }
}

const COLUMNS: &str = "id, workspace_id, title, description, created_at, updated_at";

/// Inserts a task.
///
/// # Errors
/// Database errors.
pub async fn insert(db: &mut AnyConnection, task: &Task) -> sqlx::Result<()> {
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

/// A page of the tasks, oldest first, that `user` may see (every task for
/// `None`, the unscoped caller), after `after` if given; only those of
/// `workspace_id` when given (L7a: an extra AND, never a substitute for
/// visibility). Returns the page and whether more follow.
///
/// # Errors
/// Database errors.
pub async fn page_visible(
    db: impl AnyExecutor<'_>,
    user: Option<&str>,
    workspace_id: Option<&str>,
    after: Option<&Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<Task>, bool)> {
    let visible = if user.is_some() {
        super::visibility::visible_task("t", "$1")
    } else {
        "$1 = $1".to_owned()
    };
    let workspace = if workspace_id.is_some() {
        "t.workspace_id = $2"
    } else {
        "$2 = $2"
    };
    let after_clause = if after.is_some() {
        "(t.created_at > $3 OR (t.created_at = $3 AND t.id > $4))"
    } else {
        "$3 = $3 AND $4 = $4"
    };
    let mut tasks: Vec<Task> = sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM tasks t WHERE {visible} AND {workspace} AND {after_clause} \
         ORDER BY t.created_at, t.id LIMIT $5"
    )))
    .bind(user.unwrap_or_default())
    .bind(workspace_id.unwrap_or_default())
    .bind(after.map_or(0, |c| c.created_at))
    .bind(after.map_or("", |c| c.id.as_str()))
    .bind(i64::from(limit) + 1)
    .fetch_all(db)
    .await?;
    let more = tasks.len() > limit as usize;
    tasks.truncate(limit as usize);
    Ok((tasks, more))
}

/// Every task, oldest first, that `user` may see: [`page_visible`] in one
/// page (for `list_tasks_kandev`, which does not page).
///
/// # Errors
/// Database errors.
pub async fn list_visible(
    db: impl AnyExecutor<'_>,
    user: Option<&str>,
    workspace_id: Option<&str>,
) -> sqlx::Result<Vec<Task>> {
    Ok(page_visible(db, user, workspace_id, None, u32::MAX)
        .await?
        .0)
}

/// Which task belongs to a project (issue 25): `owner_id` is the user's id
/// (`""` with auth off), `workspace_id` `""` for none.
#[derive(Debug, Clone, Copy)]
pub struct ProjectKey<'a> {
    /// The user the task belongs to.
    pub owner_id: &'a str,
    /// The workspace it was made in.
    pub workspace_id: &'a str,
    /// The project's name.
    pub project: &'a str,
}

/// The task of `key`, if one was made.
///
/// # Errors
/// Database errors.
pub async fn of_project(
    db: impl AnyExecutor<'_>,
    key: ProjectKey<'_>,
) -> sqlx::Result<Option<Task>> {
    sqlx::query_as(
        "SELECT t.id, t.workspace_id, t.title, t.description, t.created_at, t.updated_at \
         FROM project_tasks p JOIN tasks t ON t.id = p.task_id \
         WHERE p.owner_id = $1 AND p.workspace_id = $2 AND p.project = $3",
    )
    .bind(key.owner_id)
    .bind(key.workspace_id)
    .bind(key.project)
    .fetch_optional(db)
    .await
}

/// Makes `task_id` the task of `key`, unless another already is: returns
/// whether this one was recorded (`false`: a racing caller's won).
///
/// # Errors
/// Database errors.
pub async fn claim_project(
    db: &mut AnyConnection,
    key: ProjectKey<'_>,
    task_id: &str,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT INTO project_tasks (owner_id, workspace_id, project, task_id) \
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(key.owner_id)
    .bind(key.workspace_id)
    .bind(key.project)
    .bind(task_id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}
