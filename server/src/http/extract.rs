//! Path and query extractors whose rejections use the API's error shape,
//! like [`super::json::Json`]: a fuzzer's (or a typo's) `?timeout=abc`
//! gets `{"error": "…timeout…"}`, never axum's plain text.

use axum::extract::FromRequestParts;
use axum::extract::rejection::{PathRejection, QueryRejection};

use super::error::Error;

/// Like [`axum::extract::Path`], rejected with `{"error": …}`.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(Error))]
pub struct Path<T>(pub T);

/// Like [`axum::extract::Query`], rejected with `{"error": …}`.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(Error))]
pub struct Query<T>(pub T);

impl From<PathRejection> for Error {
    fn from(rejection: PathRejection) -> Self {
        if rejection.status().is_server_error() {
            Self::internal(rejection)
        } else {
            Self::BadRequest(format!("path: {}", rejection.body_text()))
        }
    }
}

impl From<QueryRejection> for Error {
    fn from(rejection: QueryRejection) -> Self {
        Self::BadRequest(rejection.body_text())
    }
}

/// `?limit=&cursor=` of a paged list; read as text so that a bad value
/// gets our error naming it, not the extractor's.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Page size (a whole number): default 50, at most 200.
    pub limit: Option<String>,
    /// The previous page's `next_cursor`.
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The page size asked for (see [`page_limit`]).
    ///
    /// # Errors
    /// A 400 naming `limit`.
    pub fn limit(&self) -> Result<Option<i64>, Error> {
        page_limit(self.limit.as_deref())
    }

    /// The cursor as given (`""` for the first page).
    #[must_use]
    pub fn cursor(&self) -> &str {
        self.cursor.as_deref().unwrap_or_default().trim()
    }

    /// The position the cursor names; `None` for the first page.
    ///
    /// # Errors
    /// A 400 naming `cursor` when this server did not issue it.
    pub fn after(&self) -> Result<Option<clarify_core::Cursor>, Error> {
        match self.cursor() {
            "" => Ok(None),
            text => clarify_core::Cursor::decode(text)
                .map(Some)
                .map_err(|e| Error::BadRequest(e.to_string())),
        }
    }
}

/// A page size given as query text (`?limit=`): absent or empty is the
/// default; anything but a whole number, written as the document says
/// one (digits, a leading `-`), is a 400 naming `limit` (L13). Not
/// trimmed: `limit=%0D` read as absent was a request the document refuses
/// accepted (Schemathesis, seed 11225308104874612201).
pub fn page_limit(text: Option<&str>) -> Result<Option<i64>, Error> {
    let whole = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    match text {
        None | Some("") => Ok(None),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|_| whole(text))
            .map(Some)
            .ok_or_else(|| {
                Error::BadRequest("limit: must be a whole number (default 50, at most 200)".into())
            }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_limit_is_empty_or_a_whole_number_as_written_nothing_else() {
        assert_eq!(super::page_limit(None).ok(), Some(None));
        assert_eq!(super::page_limit(Some("")).ok(), Some(None));
        assert_eq!(super::page_limit(Some("7")).ok(), Some(Some(7)));
        assert_eq!(super::page_limit(Some("-3")).ok(), Some(Some(-3)));
        for refused in ["\r", " ", " 7", "7 ", "+7", "7.0", "-", "x"] {
            assert!(super::page_limit(Some(refused)).is_err(), "{refused:?}");
        }
    }
}
