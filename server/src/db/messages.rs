//! Transcript messages; clarification questions are messages of type
//! `clarification_request` whose metadata carries the bundle (see
//! [`super::clarification`]).

use sqlx::{AnyConnection, AnyExecutor};

use super::page;

use crate::clock;

/// The message type of one question of a bundle.
pub const CLARIFICATION_REQUEST: &str = clarify_core::MessageKind::ClarificationRequest.as_str();

/// A message row.
#[derive(Debug, Clone)]
pub struct Message {
    /// Its id.
    pub id: String,
    /// The session it belongs to.
    pub task_session_id: String,
    /// Its task; may be `""` on legacy rows (M5).
    pub task_id: String,
    /// The turn it was written in.
    pub turn_id: String,
    /// `clarification_request`, `agent`, …
    pub kind: String,
    /// Text content.
    pub content: String,
    /// JSON metadata, served as an object.
    pub metadata: String,
    /// When it was written.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// Why its bundle was declined, `""` for none (read beside the rows,
    /// never stored in them: [`super::declines`]).
    pub reject_reason: String,
}

super::row::from_row!(Message { id, task_session_id, task_id, turn_id, kind = "type", content, metadata, created_at, updated_at, reject_reason });

impl From<Message> for clarify_core::api::Message {
    fn from(m: Message) -> Self {
        Self {
            id: m.id,
            task_session_id: m.task_session_id,
            task_id: m.task_id,
            turn_id: m.turn_id,
            kind: m.kind,
            content: m.content,
            // Served as an object, as stored.
            metadata: serde_json::from_str(&m.metadata).unwrap_or(serde_json::Value::Null),
            created_at: clock::rfc3339(m.created_at),
            updated_at: clock::rfc3339(m.updated_at),
            reject_reason: m.reject_reason,
        }
    }
}

const COLUMNS: &str =
    "id, task_session_id, task_id, turn_id, type, content, metadata, created_at, updated_at";

/// What a read of messages as `m` selects: the row and its bundle's decline
/// reason.
fn select_columns() -> String {
    format!(
        "m.id, m.task_session_id, m.task_id, m.turn_id, m.type, m.content, m.metadata, \
         m.created_at, m.updated_at, {}",
        super::declines::reason_column("m")
    )
}

/// Inserts a message.
///
/// # Errors
/// Database errors.
pub async fn insert(db: &mut AnyConnection, message: &Message) -> sqlx::Result<()> {
    sqlx::query(super::sql(format!(
        "INSERT INTO task_session_messages ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    )))
    .bind(&message.id)
    .bind(&message.task_session_id)
    .bind(&message.task_id)
    .bind(&message.turn_id)
    .bind(&message.kind)
    .bind(&message.content)
    .bind(&message.metadata)
    .bind(message.created_at)
    .bind(message.updated_at)
    .execute(db)
    .await?;
    Ok(())
}

/// The messages of one bundle, in one query, oldest first.
///
/// # Errors
/// Database errors.
pub async fn of_bundle(db: impl AnyExecutor<'_>, pending_id: &str) -> sqlx::Result<Vec<Message>> {
    sqlx::query_as(super::sql(format!(
        "SELECT {} FROM task_session_messages m \
         WHERE m.pending_id = $1 AND m.type = '{CLARIFICATION_REQUEST}' ORDER BY m.created_at, m.id",
        select_columns()
    )))
    .bind(pending_id)
    .fetch_all(db)
    .await
}

/// A page of a task's transcript across its sessions, in `(created_at, id)`
/// order strictly after `after`; plus whether more exist.
///
/// # Errors
/// Database errors.
pub async fn for_task_page(
    db: impl AnyExecutor<'_>,
    task_id: &str,
    after: Option<&clarify_core::Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<Message>, bool)> {
    let select = format!(
        "SELECT {} FROM task_session_messages m \
         JOIN task_sessions s ON s.id = m.task_session_id WHERE s.task_id = $1",
        select_columns()
    );
    page::fetch_page(db, &select, "m.", task_id, after, limit).await
}

/// A page of one session's transcript, in `(created_at, id)` order
/// strictly after `after`; plus whether more exist.
///
/// # Errors
/// Database errors.
pub async fn for_session_page(
    db: impl AnyExecutor<'_>,
    session_id: &str,
    after: Option<&clarify_core::Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<Message>, bool)> {
    let select = format!(
        "SELECT {} FROM task_session_messages m WHERE m.task_session_id = $1",
        select_columns()
    );
    page::fetch_page(db, &select, "m.", session_id, after, limit).await
}
