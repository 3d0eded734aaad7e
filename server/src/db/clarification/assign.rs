//! Who a bundle is for (issue 29 item 6): written into each of its active
//! questions' metadata, like the other marks, under the bundle's lock.

use clarify_core::ClarificationMetadata;

use super::{active, write_metadata};
use crate::db::Db;

/// Sets the assignee of `pending_id`'s active questions (`""` for nobody);
/// whether it had any (an inactive bundle is not reassigned).
///
/// # Errors
/// Database errors.
pub async fn assign(db: &Db, pending_id: &str, assignee: &str, now: i64) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    // Locked as read, in id order, as every write of these rows is.
    let rows: Vec<(String, String)> = sqlx::query_as(crate::db::sql(format!(
        "SELECT m.id, m.metadata FROM task_session_messages m \
         WHERE m.pending_id = $1 AND {} ORDER BY m.id{}",
        active("m"),
        db.backend().for_update()
    )))
    .bind(pending_id)
    .fetch_all(&mut *tx)
    .await?;
    for (id, metadata) in &rows {
        let value = serde_json::from_str(metadata).unwrap_or(serde_json::Value::Null);
        let mut meta = ClarificationMetadata::from_json(&value);
        assignee.clone_into(&mut meta.assignee);
        write_metadata(&mut tx, id, &meta, now).await?;
    }
    tx.commit().await?;
    Ok(!rows.is_empty())
}
