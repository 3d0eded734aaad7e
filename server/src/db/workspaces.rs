//! Workspaces: a name and an owner (empty when auth is off).

use serde::Serialize;
use sqlx::{AnyExecutor, FromRow};

use crate::clock;

/// A workspace row.
#[derive(Debug, Clone, Serialize, FromRow)]
pub struct Workspace {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The user who created it; `""` when auth is off.
    pub owner_id: String,
    /// When it was created.
    #[serde(serialize_with = "clock::as_rfc3339")]
    pub created_at: i64,
}

/// Inserts a workspace.
///
/// # Errors
/// Database errors.
pub async fn insert(db: impl AnyExecutor<'_>, workspace: &Workspace) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO workspaces (id, name, owner_id, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&workspace.id)
        .bind(&workspace.name)
        .bind(&workspace.owner_id)
        .bind(workspace.created_at)
        .execute(db)
        .await?;
    Ok(())
}

/// Every workspace, oldest first.
///
/// # Errors
/// Database errors.
pub async fn list(db: impl AnyExecutor<'_>) -> sqlx::Result<Vec<Workspace>> {
    sqlx::query_as("SELECT id, name, owner_id, created_at FROM workspaces ORDER BY created_at, id")
        .fetch_all(db)
        .await
}
