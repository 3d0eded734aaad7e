//! The tables replicas coordinate through (PostgreSQL only, migration
//! `0004_replicas`): who is attached to which bundle, the messages one
//! replica sends the others, and MCP sessions.

use sqlx::{AnyConnection, AnyExecutor};

/// The NOTIFY channel announcing new rows of `replica_messages`.
pub const CHANNEL: &str = "clarify_replicas";

/// Records that an agent counts as attached to `pending_id` until `until`
/// (never moving an attachment backwards).
///
/// # Errors
/// Database errors.
pub async fn attach(db: impl AnyExecutor<'_>, pending_id: &str, until: i64) -> sqlx::Result<()> {
    sqlx::query(super::sql(upsert_attachments(1)))
        .bind(pending_id)
        .bind(until)
        .execute(db)
        .await?;
    Ok(())
}

/// The upsert of `rows` attachments, parameters `(pending_id, until)` each.
fn upsert_attachments(rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|i| format!("(${}, ${})", 2 * i + 1, 2 * i + 2))
        .collect();
    format!(
        "INSERT INTO clarification_attachments (pending_id, attached_until) VALUES {} \
         ON CONFLICT (pending_id) DO UPDATE SET attached_until = \
             GREATEST(clarification_attachments.attached_until, excluded.attached_until)",
        values.join(", ")
    )
}

/// [`attach`] for many bundles at once, a few statements in all (a replica
/// may hold thousands of blocked agents).
///
/// # Errors
/// Database errors.
pub async fn attach_all(db: &super::Db, leases: &[(String, i64)]) -> sqlx::Result<()> {
    // Two parameters a row, well under PostgreSQL's 65 535 a statement.
    for chunk in leases.chunks(1000) {
        let mut query = sqlx::query(super::sql(upsert_attachments(chunk.len())));
        for (pending_id, until) in chunk {
            query = query.bind(pending_id).bind(until);
        }
        query.execute(db.pool()).await?;
    }
    Ok(())
}

/// Whether an agent is attached to `pending_id` at `now`, on any replica.
///
/// # Errors
/// Database errors.
pub async fn is_attached(
    db: impl AnyExecutor<'_>,
    pending_id: &str,
    now: i64,
) -> sqlx::Result<bool> {
    let found: Option<(String,)> = sqlx::query_as(
        "SELECT pending_id FROM clarification_attachments \
         WHERE pending_id = $1 AND attached_until > $2",
    )
    .bind(pending_id)
    .bind(now)
    .fetch_optional(db)
    .await?;
    Ok(found.is_some())
}

/// Stores `payload` from replica `origin` and announces it on [`CHANNEL`]
/// as `"{origin} {id}"`; the announcement goes out when the row commits.
///
/// # Errors
/// Database errors.
pub async fn send(
    db: impl AnyExecutor<'_>,
    origin: &str,
    payload: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(super::sql(format!(
        "WITH sent AS (INSERT INTO replica_messages (origin, payload, created_at) \
             VALUES ($1, $2, $3) RETURNING id) \
         SELECT CAST(pg_notify('{CHANNEL}', $1 || ' ' || CAST(sent.id AS TEXT)) AS TEXT) FROM sent"
    )))
    .bind(origin)
    .bind(payload)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// Stores `payloads` from replica `origin` in one statement, in order, and
/// announces each as [`send`] does, in the caller's transaction: one whose
/// commit need not wait for the disk ([`super::Db::begin_write_unflushed`]),
/// since a wake lost with a crash of PostgreSQL is made good by every
/// replica's listener, which re-reads its waiters' bundles when its link
/// drops.
///
/// # Errors
/// Database errors.
pub async fn send_many(
    db: &mut AnyConnection,
    origin: &str,
    payloads: &[String],
    now: i64,
) -> sqlx::Result<()> {
    if payloads.is_empty() {
        return Ok(());
    }
    // $1 the origin, $2 the time, then one parameter per payload.
    let rows: Vec<String> = (0..payloads.len())
        .map(|n| format!("($1, ${}, $2)", n + 3))
        .collect();
    let sql = format!(
        "WITH sent AS (INSERT INTO replica_messages (origin, payload, created_at) \
             VALUES {} RETURNING id) \
         SELECT CAST(pg_notify('{CHANNEL}', $1 || ' ' || CAST(sent.id AS TEXT)) AS TEXT) \
         FROM sent ORDER BY sent.id",
        rows.join(", ")
    );
    let mut query = sqlx::query(super::sql(sql)).bind(origin).bind(now);
    for payload in payloads {
        query = query.bind(payload);
    }
    query.execute(db).await?;
    Ok(())
}

/// The payload of message `id` and when it was sent (microseconds, by the
/// sender's clock), `None` once it has been forgotten.
///
/// # Errors
/// Database errors.
pub async fn received(db: impl AnyExecutor<'_>, id: i64) -> sqlx::Result<Option<(String, i64)>> {
    sqlx::query_as("SELECT payload, created_at FROM replica_messages WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
}

/// The stored MCP session `id` (its `initialize` parameters, as JSON).
///
/// # Errors
/// Database errors.
pub async fn mcp_session(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<Option<String>> {
    let row: Option<(String,)> = sqlx::query_as("SELECT state FROM mcp_sessions WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?;
    Ok(row.map(|(state,)| state))
}

/// Stores MCP session `id`.
///
/// # Errors
/// Database errors.
pub async fn store_mcp_session(
    db: impl AnyExecutor<'_>,
    id: &str,
    state: &str,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO mcp_sessions (id, state, created_at) VALUES ($1, $2, $3) \
         ON CONFLICT (id) DO UPDATE SET state = excluded.state",
    )
    .bind(id)
    .bind(state)
    .bind(now)
    .execute(db)
    .await?;
    Ok(())
}

/// Forgets MCP session `id` (the client closed it).
///
/// # Errors
/// Database errors.
pub async fn delete_mcp_session(db: impl AnyExecutor<'_>, id: &str) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM mcp_sessions WHERE id = $1")
        .bind(id)
        .execute(db)
        .await?;
    Ok(())
}

/// Deletes messages and attachments that ended before `before`, and MCP
/// sessions opened before `sessions_before` (a client whose session is gone
/// gets 404 and opens a new one, as the MCP specification has it).
///
/// # Errors
/// Database errors.
pub async fn forget(db: &super::Db, before: i64, sessions_before: i64) -> sqlx::Result<()> {
    sqlx::query("DELETE FROM replica_messages WHERE created_at < $1")
        .bind(before)
        .execute(db.pool())
        .await?;
    sqlx::query("DELETE FROM clarification_attachments WHERE attached_until < $1")
        .bind(before)
        .execute(db.pool())
        .await?;
    sqlx::query("DELETE FROM mcp_sessions WHERE created_at < $1")
        .bind(sessions_before)
        .execute(db.pool())
        .await?;
    Ok(())
}
