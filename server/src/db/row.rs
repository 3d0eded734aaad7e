//! Reading a row into a struct: [`from_row!`] writes the `FromRow` impl a
//! derive would, column by field name. Written out instead of derived:
//! sqlx's derive is a proc macro that compiles a second copy of sqlx, with
//! both database drivers and SQLite's C source, for the build host
//! (issue 25: the first build).

use sqlx::Row as _;
use sqlx::any::AnyRow;

/// `from_row!(Message { id, kind = "type", … })`: each field from the
/// column of its name, or of the name given.
macro_rules! from_row {
    ($ty:ident { $($field:ident $(= $column:literal)?),* $(,)? }) => {
        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $ty {
            fn from_row(row: &'r sqlx::any::AnyRow) -> sqlx::Result<Self> {
                use sqlx::Row as _;
                Ok(Self {
                    $($field: row.try_get($crate::db::row::from_row!(@column $field $($column)?))?,)*
                })
            }
        }
    };
    (@column $field:ident $column:literal) => { $column };
    (@column $field:ident) => { stringify!($field) };
}
pub(crate) use from_row;

/// A text column read as `T` (a state's spelling, say), an unknown value
/// being a decode error naming the column.
///
/// # Errors
/// A missing column, or a text `T` does not take.
pub fn parsed<T>(row: &AnyRow, column: &str) -> sqlx::Result<T>
where
    T: TryFrom<String>,
    T::Error: std::error::Error + Send + Sync + 'static,
{
    let text: String = row.try_get(column)?;
    T::try_from(text).map_err(|e| sqlx::Error::ColumnDecode {
        index: column.to_owned(),
        source: Box::new(e),
    })
}
