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

/// A page size given as query text (`?limit=`): absent or empty is the
/// default; anything but a whole number is a 400 naming `limit` (L13).
pub fn page_limit(text: Option<&str>) -> Result<Option<i64>, Error> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => text.parse::<i64>().map(Some).map_err(|_| {
            Error::BadRequest("limit: must be a whole number (default 50, at most 200)".into())
        }),
    }
}
