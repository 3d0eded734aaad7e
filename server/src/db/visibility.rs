//! Who may see a task (L1c), as SQL: the one statement of task visibility,
//! used inside the listing queries and by per-task checks alike.

use sqlx::AnyExecutor;

/// L1c as SQL on the task alias `t` for the user bound at `user_param`
/// (e.g. `$1`): the task has no workspace, or its workspace row does not
/// exist, or the workspace is unowned or the user's. The one statement of
/// task visibility; listings and per-task checks both use it.
#[must_use]
pub fn visible_task(t: &str, user_param: &str) -> String {
    format!(
        "({t}.workspace_id = '' \
         OR NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = {t}.workspace_id) \
         OR EXISTS (SELECT 1 FROM workspaces w WHERE w.id = {t}.workspace_id \
             AND (w.owner_id = '' OR w.owner_id = {user_param})))"
    )
}

/// Whether the user `user_id` may see task `task_id` (L1c).
///
/// # Errors
/// Database errors.
pub async fn task_visible_to(
    db: impl AnyExecutor<'_>,
    task_id: &str,
    user_id: &str,
) -> sqlx::Result<bool> {
    let found: Option<(String,)> = sqlx::query_as(super::sql(format!(
        "SELECT t.id FROM tasks t WHERE t.id = $1 AND {}",
        visible_task("t", "$2")
    )))
    .bind(task_id)
    .bind(user_id)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}
