//! The channels' leases and cursors (migration 0021, issue 48 item 2): a
//! row per connection only one replica may hold, taken when expired,
//! renewed and written only under its fence.

use sqlx::{AnyExecutor, Row as _};

use super::Db;

/// Takes lease `name` for `holder` until `until`, if it is free, expired
/// at `now`, or already `holder`'s: the new fence, or `None` when another
/// holder has it.
///
/// # Errors
/// Database errors.
pub async fn take(
    db: &Db,
    name: &str,
    holder: &str,
    now: i64,
    until: i64,
) -> sqlx::Result<Option<i64>> {
    let mut tx = db.begin_write().await?;
    let fence = sqlx::query(
        "INSERT INTO channel_leases (name, holder, fence, until_micros) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
             fence = channel_leases.fence + 1, until_micros = excluded.until_micros \
         WHERE channel_leases.until_micros < $4 OR channel_leases.holder = excluded.holder \
         RETURNING fence",
    )
    .bind(name)
    .bind(holder)
    .bind(until)
    .bind(now)
    .fetch_optional(&mut *tx)
    .await?
    .map(|row| row.try_get::<i64, _>(0))
    .transpose()?;
    tx.commit().await?;
    Ok(fence)
}

/// Moves the end of `holder`'s lease `name` under `fence` to `until`:
/// false when it is no longer theirs.
///
/// # Errors
/// Database errors.
pub async fn renew(
    db: &Db,
    name: &str,
    holder: &str,
    fence: i64,
    until: i64,
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    let renewed = sqlx::query(
        "UPDATE channel_leases SET until_micros = $4 \
         WHERE name = $1 AND holder = $2 AND fence = $3",
    )
    .bind(name)
    .bind(holder)
    .bind(fence)
    .bind(until)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    tx.commit().await?;
    Ok(renewed)
}

/// Stores `cursor` with lease `name` while `holder` holds it under
/// `fence`: false when it does not (a holder presumed dead writes nothing).
///
/// # Errors
/// Database errors.
pub async fn set_cursor(
    db: &Db,
    name: &str,
    holder: &str,
    fence: i64,
    cursor: &str,
) -> sqlx::Result<bool> {
    let mut tx = db.begin_write().await?;
    let written = sqlx::query(
        "UPDATE channel_leases SET cursor = $4 WHERE name = $1 AND holder = $2 AND fence = $3",
    )
    .bind(name)
    .bind(holder)
    .bind(fence)
    .bind(cursor)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    tx.commit().await?;
    Ok(written)
}

/// The cursor kept with lease `name`.
///
/// # Errors
/// Database errors.
pub async fn cursor(db: impl AnyExecutor<'_>, name: &str) -> sqlx::Result<Option<String>> {
    sqlx::query_scalar::<_, Option<String>>("SELECT cursor FROM channel_leases WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await
        .map(Option::flatten)
}

/// Gives lease `name` up at once (a clean stop), if `holder` still has it.
///
/// # Errors
/// Database errors.
pub async fn release(db: &Db, name: &str, holder: &str, fence: i64) -> sqlx::Result<()> {
    renew(db, name, holder, fence, 0).await.map(drop)
}
