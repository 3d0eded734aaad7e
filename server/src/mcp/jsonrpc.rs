//! What reaches rmcp is one JSON-RPC message (issue 30): a body that is not
//! JSON is answered `400` with a JSON-RPC parse error (`-32700`), and a
//! batch, or an object that is neither a request nor a response, with an
//! invalid-request error (`-32600`), on both surfaces and in both eras;
//! rmcp's own answer was `415` with serde's words in plain text.
//!
//! Every `POST` is read whole here, before it takes one of rmcp's turns
//! (issue 45 item 6 B1): media types are matched without regard to case,
//! as rmcp does, so `APPLICATION/JSON` no longer slipped past the reading
//! and held a turn while its body trickled in; any other type is refused
//! `415` unread; and the body arrives under the server's body deadline
//! (`crate::serve::body`), else `408`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::json;

use crate::http::error::Error;

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;

/// The keys that tell a request or a notification (`method`) from a
/// response (`id` with `result` or `error`).
#[derive(Deserialize)]
struct Shape {
    method: Option<IgnoredAny>,
    id: Option<IgnoredAny>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// Refuses a `POST` that is not JSON, or whose body is not one JSON-RPC
/// message; another method goes on untouched.
pub(super) async fn well_formed(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    if !is_json(request.headers()) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            INVALID_REQUEST,
            "Invalid Request: Content-Type must be application/json",
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, super::binding::MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(failed) if crate::serve::body::too_slow(&failed) => {
            return Error::RequestTimeout.into_response();
        }
        Err(_) => return Error::PayloadTooLarge.into_response(),
    };
    if let Some(refusal) = refusal(&bytes) {
        return refusal;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether the body says it is JSON: the media type, before any parameter,
/// in any case (RFC 9110 §8.3.1).
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// The answer to `body` when it is not one JSON-RPC message.
fn refusal(body: &[u8]) -> Option<Response> {
    // A batch: JSON-RPC allows it, MCP does not (since 2025-06-18). Told
    // before it is read as a struct, which serde would take from an array.
    if body.trim_ascii_start().first() == Some(&b'[') {
        return Some(invalid(
            INVALID_REQUEST,
            "Invalid Request: batches are not supported",
        ));
    }
    match serde_json::from_slice::<Shape>(body) {
        Ok(Shape {
            method: Some(_), ..
        }) => None,
        Ok(Shape {
            id: Some(_),
            result,
            error: failure,
            ..
        }) if result.is_some() || failure.is_some() => None,
        Ok(_) => Some(invalid(
            INVALID_REQUEST,
            "Invalid Request: neither a request (no method) nor a response",
        )),
        Err(e) if e.is_data() => Some(invalid(
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC message is an object",
        )),
        Err(_) => Some(invalid(PARSE_ERROR, "Parse error: the body is not JSON")),
    }
}

fn invalid(code: i64, message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, code, message)
}

fn error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    (status, axum::Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::{is_json, refusal};

    /// The JSON-RPC error code `body` is refused with, if it is.
    async fn code(body: &str) -> Option<i64> {
        let response = refusal(body.as_bytes())?;
        assert_eq!(response.status(), 400, "{body}");
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["id"], serde_json::Value::Null, "{answer}");
        answer["error"]["code"].as_i64()
    }

    /// Issue 45 item 6 B1: a media type in any case, parameters aside.
    #[test]
    fn json_is_told_in_any_case() {
        let says = |value: &str| {
            let mut headers = axum::http::HeaderMap::new();
            headers.insert("content-type", value.parse().unwrap());
            is_json(&headers)
        };
        assert!(says("application/json"));
        assert!(says("APPLICATION/JSON; charset=UTF-8"));
        assert!(says(" Application/Json ;charset=utf-8"));
        assert!(!says("application/jsonp"));
        assert!(!says("text/plain"));
        assert!(!is_json(&axum::http::HeaderMap::new()));
    }

    #[tokio::test]
    async fn only_one_request_or_response_passes() {
        assert_eq!(code(r#"{"jsonrpc":"2.0","#).await, Some(-32700));
        assert_eq!(code("").await, Some(-32700));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await,
            Some(-32600)
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#).await, Some(-32600));
        assert_eq!(code("42").await, Some(-32600));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await,
            None
        );
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(code(notification).await, None);
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).await, None);
        let failure = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#;
        assert_eq!(code(failure).await, None);
    }
}
