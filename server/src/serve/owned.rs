//! A request's head copied out of hyper's read buffer before it is routed.
//!
//! hyper parses a request in place: its header values and URI are slices
//! of the connection's read buffer, so whatever keeps one alive keeps the
//! whole buffer. A request that waits long (a blocked agent, a stream)
//! then pinned its first 8 KiB buffer while hyper, reading for the next
//! request, allocated a second (`tests/benches/waiters.rs`, issue 50).
//! Copying the few hundred bytes of the head lets hyper reuse one buffer.

use axum::body::Bytes;
use axum::http::{HeaderValue, Request, Uri};

/// `request` with its URI and header values in allocations of their own.
pub(super) fn own_head<B>(mut request: Request<B>) -> Request<B> {
    for value in request.headers_mut().values_mut() {
        let sensitive = value.is_sensitive();
        if let Ok(mut copy) = HeaderValue::from_bytes(value.as_bytes()) {
            copy.set_sensitive(sensitive);
            *value = copy;
        }
    }
    let uri = Bytes::copy_from_slice(request.uri().to_string().as_bytes());
    if let Ok(uri) = Uri::from_maybe_shared(uri) {
        *request.uri_mut() = uri;
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What hyper hands over (values and URI sliced from its buffer) no
    /// longer holds the buffer once owned: the buffer is the only holder.
    #[test]
    fn the_owned_head_holds_nothing_of_the_read_buffer() {
        let path = "/api/v1/clarification/p1/wait?timeout=120";
        let buffer = Bytes::from(format!("{path}Bearer secret").into_bytes());
        let uri = Uri::from_maybe_shared(buffer.slice(..path.len())).unwrap();
        let mut token = HeaderValue::from_maybe_shared(buffer.slice(path.len()..)).unwrap();
        token.set_sensitive(true);
        let request = Request::builder()
            .uri(uri)
            .header("authorization", token)
            .body(())
            .unwrap();
        assert!(!buffer.is_unique(), "the request shares the buffer");

        let owned = own_head(request);
        assert!(buffer.is_unique(), "the owned request holds none of it");
        assert_eq!(owned.uri(), path);
        let value = &owned.headers()["authorization"];
        assert_eq!(value, "Bearer secret");
        assert!(value.is_sensitive(), "a secret stays marked so");
    }
}
