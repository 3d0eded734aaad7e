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
    page_filtered(
        db,
        user,
        TaskFilter {
            workspace_id,
            ..TaskFilter::default()
        },
        after,
        limit,
    )
    .await
}

/// Which tasks a page lists, beyond what the caller may see.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskFilter<'a> {
    /// Only this workspace's (L7a).
    pub workspace_id: Option<&'a str>,
    /// Only those with a question waiting now (T1).
    pub waiting: bool,
    /// Newest first (issue 29 item 4), instead of oldest first.
    pub newest_first: bool,
}

/// [`page_visible`] with a [`TaskFilter`]: the keyset runs the other way
/// when newest come first.
///
/// # Errors
/// Database errors.
pub async fn page_filtered(
    db: impl AnyExecutor<'_>,
    user: Option<&str>,
    filter: TaskFilter<'_>,
    after: Option<&Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<Task>, bool)> {
    let TaskFilter {
        workspace_id,
        waiting,
        newest_first,
    } = filter;
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
    let (after_clause, order) = match (after.is_some(), newest_first) {
        (true, false) => (
            "(t.created_at > $3 OR (t.created_at = $3 AND t.id > $4))",
            "t.created_at, t.id",
        ),
        (true, true) => (
            "(t.created_at < $3 OR (t.created_at = $3 AND t.id < $4))",
            "t.created_at DESC, t.id DESC",
        ),
        (false, false) => ("$3 = $3 AND $4 = $4", "t.created_at, t.id"),
        (false, true) => ("$3 = $3 AND $4 = $4", "t.created_at DESC, t.id DESC"),
    };
    let waiting = if waiting {
        format!(
            "EXISTS (SELECT 1 FROM task_session_messages m \
             JOIN task_sessions ws ON ws.id = m.task_session_id \
             WHERE ws.task_id = t.id AND {})",
            super::clarification::active("m")
        )
    } else {
        "1 = 1".to_owned()
    };
    let mut tasks: Vec<Task> = sqlx::query_as(super::sql(format!(
        "SELECT {COLUMNS} FROM tasks t WHERE {visible} AND {workspace} AND {waiting} \
         AND {after_clause} ORDER BY {order} LIMIT $5"
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

/// What last happened in a task (issue 29 item 4): its newest message's
/// time, and its newest question's stored status and last change.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// The newest message's `created_at`; 0 for none.
    pub newest_message: i64,
    /// The newest question's stored status (`""` for never asked).
    pub last_status: String,
    /// When the newest question last changed (answered, expired…); 0 for none.
    pub last_question_change: i64,
    /// Whether the newest question took its defaults at expiry (issue 46
    /// item 7: nobody answered it, whatever its stored status says).
    pub defaulted: bool,
}

/// [`Activity`] of each of `task_ids`, in one query whose subqueries each
/// walk the `(task_session_id, created_at, id)` index backwards, never a
/// task's whole history.
///
/// # Errors
/// Database errors.
pub async fn activity(
    db: impl AnyExecutor<'_>,
    task_ids: &[String],
) -> sqlx::Result<std::collections::HashMap<String, Activity>> {
    if task_ids.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    let newest_question = |column: &str| {
        format!(
            "(SELECT m.{column} FROM task_session_messages m \
             JOIN task_sessions s ON s.id = m.task_session_id \
             WHERE s.task_id = t.id AND m.type = '{}' \
             ORDER BY m.created_at DESC, m.id DESC LIMIT 1)",
            clarify_core::MessageKind::ClarificationRequest.as_str()
        )
    };
    let sql = format!(
        "SELECT t.id, \
         COALESCE((SELECT MAX(m.created_at) FROM task_session_messages m \
             JOIN task_sessions s ON s.id = m.task_session_id WHERE s.task_id = t.id), 0), \
         COALESCE({}, ''), COALESCE({}, 0), COALESCE({}, '{{}}') \
         FROM tasks t WHERE t.id IN ({})",
        newest_question("clarification_status"),
        newest_question("updated_at"),
        newest_question("metadata"),
        super::placeholders(1, task_ids.len())
    );
    let mut query = sqlx::query_as(super::sql(sql));
    for id in task_ids {
        query = query.bind(id);
    }
    let rows: Vec<(String, i64, String, i64, String)> = query.fetch_all(db).await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, newest_message, last_status, last_question_change, metadata)| {
                let defaulted = serde_json::from_str::<serde_json::Value>(&metadata)
                    .ok()
                    .and_then(|m| {
                        m.get(clarify_core::metadata_key::ANSWERED_BY)?
                            .get("channel")?
                            .as_str()
                            .map(|c| c == clarify_core::Channel::Expiry.as_str())
                    })
                    .unwrap_or(false);
                (
                    id,
                    Activity {
                        newest_message,
                        last_status,
                        last_question_change,
                        defaulted,
                    },
                )
            },
        )
        .collect())
}
