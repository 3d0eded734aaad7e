//! A JSON body extractor whose rejections use the API's error shape, naming
//! the field serde could not read (`answers[0].custom_text: invalid type…`),
//! refusing the NUL character anywhere in the body (PostgreSQL cannot
//! store it, so neither backend accepts it), and refusing an array where
//! every body is an object.

use axum::body::Bytes;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::Error;

/// Like [`axum::Json`], but rejected with `{"error": …}`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T, S> FromRequest<S> for Json<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        require_json(req.headers())?;
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Error::PayloadTooLarge
            } else if crate::serve::body::too_slow(&rejection) {
                Error::RequestTimeout
            } else {
                Error::BadRequest("invalid request body".to_owned())
            }
        })?;
        decode(&bytes).map(Self)
    }
}

/// Refuses a body that does not say it is JSON (415): a browser can send a
/// `text/plain` or form body cross-site without asking first, JSON never.
///
/// # Errors
/// 415 naming the expected type.
pub fn require_json(headers: &HeaderMap) -> Result<(), Error> {
    if is_json(headers) {
        Ok(())
    } else {
        Err(Error::UnsupportedMediaType)
    }
}

/// Reads a JSON body as `T`, naming the field at fault.
///
/// # Errors
/// 400 naming the field (or the NUL character's place); 422 for JSON of
/// the wrong shape, an array included.
pub fn decode<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, Error> {
    // JSON can only spell NUL as an escape; look closer only then.
    if bytes.windows(6).any(|w| w == b"\\u0000")
        && let Ok(value) = serde_json::from_slice::<Value>(bytes)
        && let Some(field) = nul_field(&value, "")
    {
        return Err(Error::BadRequest(format!(
            "{field}: may not contain the NUL character (U+0000)"
        )));
    }
    // serde reads a struct from a JSON array too, field by field, so
    // `[null, null]` made a session and `["x"]` a workspace. Every body
    // the API takes is an object; an array is JSON of the wrong shape.
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(Error::Unprocessable(
            "invalid request body: expected a JSON object, got an array".to_owned(),
        ));
    }
    match axum::Json::<T>::from_bytes(bytes) {
        Ok(axum::Json(value)) => Ok(value),
        Err(rejection) => Err(rejection_error(&rejection)),
    }
}

/// `application/json`, or a `+json` type.
fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence.starts_with("application/") && essence.ends_with("+json")
}

/// The path of the first string or key holding U+0000.
fn nul_field(value: &Value, path: &str) -> Option<String> {
    match value {
        Value::String(text) if text.contains('\0') => Some(if path.is_empty() {
            "body".to_owned()
        } else {
            path.to_owned()
        }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_field(item, &format!("{path}[{i}]"))),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let path = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if key.contains('\0') {
                Some(path)
            } else {
                nul_field(item, &path)
            }
        }),
        _ => None,
    }
}

fn rejection_error(rejection: &JsonRejection) -> Error {
    match rejection {
        // axum's text for these says what serde said, with the field's path.
        JsonRejection::JsonDataError(e) => Error::Unprocessable(format!(
            "invalid request body: {}",
            e.body_text()
                .trim_start_matches("Failed to deserialize the JSON body into the target type: ")
        )),
        JsonRejection::JsonSyntaxError(_) => {
            Error::BadRequest("invalid request body: not valid JSON".to_owned())
        }
        _ => Error::BadRequest("invalid request body".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, value.parse().unwrap());
        headers
    }

    #[test]
    fn json_and_json_suffixed_types_are_json_and_nothing_else_is() {
        for json in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            "application/merge-patch+json",
        ] {
            assert!(is_json(&typed(json)), "{json}");
        }
        for other in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "application/jsonx",
        ] {
            assert!(!is_json(&typed(other)), "{other}");
        }
        assert!(!is_json(&HeaderMap::new()), "no type at all");
    }

    #[test]
    fn a_nul_is_found_with_its_path() {
        let value: Value =
            serde_json::from_str(r#"{"answers": [{"custom_text": "a\u0000"}]}"#).unwrap();
        assert_eq!(
            nul_field(&value, "").as_deref(),
            Some("answers[0].custom_text")
        );
        assert_eq!(nul_field(&serde_json::json!({"ok": "fine"}), ""), None);
    }
}
