//! Keyset pages over `(created_at, id)`, the one order of every list: the
//! condition that starts a page after a [`Cursor`], and the one extra row
//! that says whether another page follows.

use clarify_core::Cursor;
use sqlx::AnyExecutor;
use sqlx::any::AnyRow;

/// A page of `limit` rows of `select` (which filters on `$1` = `key`; this
/// appends the keyset condition, the order and the limit), strictly after
/// `after`; plus whether more follow. `alias` prefixes the columns (`"m."`)
/// when `select` joins.
///
/// # Errors
/// Database errors.
pub async fn fetch_page<T>(
    db: impl AnyExecutor<'_>,
    select: &str,
    alias: &str,
    key: &str,
    after: Option<&Cursor>,
    limit: u32,
) -> sqlx::Result<(Vec<T>, bool)>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
{
    let (created_at, id) = binds(after);
    let rows = sqlx::query_as(super::sql(format!(
        "{select} AND {} ORDER BY {alias}created_at, {alias}id LIMIT $4",
        after_sql(alias, after)
    )))
    .bind(key)
    .bind(created_at)
    .bind(id)
    .bind(fetch(limit))
    .fetch_all(db)
    .await?;
    Ok(split(rows, limit))
}

/// SQL that holds for the rows of `alias` after `$2`, `$3` (the cursor's
/// `created_at` and `id`) when there is a cursor, and for every row when
/// not (both still bound, so each query has one shape of parameters).
#[must_use]
fn after_sql(alias: &str, after: Option<&Cursor>) -> String {
    if after.is_some() {
        format!("({alias}created_at > $2 OR ({alias}created_at = $2 AND {alias}id > $3))")
    } else {
        "($2 = $2 AND $3 = $3)".to_owned()
    }
}

/// The cursor's binds for [`after_sql`]: `created_at`, then `id`.
#[must_use]
fn binds(after: Option<&Cursor>) -> (i64, &str) {
    (
        after.map_or(0, |c| c.created_at),
        after.map_or("", |c| c.id.as_str()),
    )
}

/// What to ask the database for: one row more than a page.
#[must_use]
fn fetch(limit: u32) -> i64 {
    i64::from(limit) + 1
}

/// A page of `limit` from `rows` fetched with [`fetch`], and whether more
/// follow.
#[must_use]
fn split<T>(mut rows: Vec<T>, limit: u32) -> (Vec<T>, bool) {
    let limit = limit as usize;
    let more = rows.len() > limit;
    rows.truncate(limit);
    (rows, more)
}

/// The cursor that continues after the last of `page`, when `more` follow;
/// `""` when this is the last page.
#[must_use]
pub fn next_cursor<T>(page: &[T], more: bool, key: impl Fn(&T) -> (i64, String)) -> String {
    match page.last() {
        Some(last) if more => {
            let (created_at, id) = key(last);
            Cursor { created_at, id }.encode()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_its_limit_and_says_whether_more_follow() {
        assert_eq!(split(vec![1, 2, 3], 2), (vec![1, 2], true));
        assert_eq!(split(vec![1, 2], 2), (vec![1, 2], false));
        let rows = [(5, "a".to_owned()), (7, "b".to_owned())];
        let next = next_cursor(&rows, true, Clone::clone);
        assert_eq!(
            Cursor::decode(&next).unwrap(),
            Cursor {
                created_at: 7,
                id: "b".into()
            }
        );
        assert_eq!(next_cursor(&rows, false, Clone::clone), "");
    }
}
