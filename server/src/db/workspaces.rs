//! Workspaces: a name and an owner (empty when auth is off).

use sqlx::{AnyConnection, AnyExecutor};

use crate::clock;

/// A workspace row.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The user who created it; `""` when auth is off.
    pub owner_id: String,
    /// When it was created.
    pub created_at: i64,
}

super::row::from_row!(Workspace {
    id,
    name,
    owner_id,
    created_at
});

impl From<Workspace> for clarify_core::api::Workspace {
    fn from(w: Workspace) -> Self {
        Self {
            id: w.id,
            name: w.name,
            owner_id: w.owner_id,
            created_at: clock::rfc3339(w.created_at),
        }
    }
}

/// Inserts a workspace.
///
/// # Errors
/// Database errors.
pub async fn insert(db: &mut AnyConnection, workspace: &Workspace) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO workspaces (id, name, owner_id, created_at) VALUES ($1, $2, $3, $4)")
        .bind(&workspace.id)
        .bind(&workspace.name)
        .bind(&workspace.owner_id)
        .bind(workspace.created_at)
        .execute(db)
        .await?;
    Ok(())
}

/// The id of `user`'s personal workspace (issue 45 item 3): fixed by the
/// user, so the workspace is found again without a lookup table and two
/// first uses racing insert the same row.
#[must_use]
pub fn personal_id(user: &str) -> String {
    format!("personal-{user}")
}

/// `user`'s personal workspace, made unless it is there: where their
/// `clarify mcp` project tasks go under auth, seen by no one else. Racing
/// callers make one (the insert yields on the key); returns its id.
///
/// # Errors
/// Database errors.
pub async fn ensure_personal(db: &mut AnyConnection, user: &str, now: i64) -> sqlx::Result<String> {
    let id = personal_id(user);
    sqlx::query(
        "INSERT INTO workspaces (id, name, owner_id, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT DO NOTHING",
    )
    .bind(&id)
    .bind(PERSONAL_NAME)
    .bind(user)
    .bind(now)
    .execute(db)
    .await?;
    Ok(id)
}

/// What a personal workspace is called.
pub const PERSONAL_NAME: &str = "Personal";

/// The workspaces `user` may see (all for `None`): unowned or theirs.
///
/// # Errors
/// Database errors.
pub async fn list_visible(
    db: impl AnyExecutor<'_>,
    user: Option<&str>,
) -> sqlx::Result<Vec<Workspace>> {
    sqlx::query_as(
        "SELECT id, name, owner_id, created_at FROM workspaces \
         WHERE $1 = '' OR owner_id = '' OR owner_id = $1 ORDER BY created_at, id",
    )
    .bind(user.unwrap_or_default())
    .fetch_all(db)
    .await
}

/// One workspace.
///
/// # Errors
/// Database errors.
pub async fn get(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<Option<Workspace>> {
    sqlx::query_as("SELECT id, name, owner_id, created_at FROM workspaces WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}
