//! Tool results: structured content (with the same JSON as text, for
//! clients that only read text) or a text-only error result (`isError`).

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

use crate::lifecycle::Error;

/// A successful result carrying `value` as structured content. The JSON
/// value keeps the struct's key order (serde_json's `preserve_order`), so an
/// answer replayed over MCP is byte for byte what REST sends (N3a).
pub fn structured<T: Serialize>(value: &T) -> CallToolResult {
    let json = serde_json::to_value(value).unwrap_or_default();
    let mut result = CallToolResult::success(vec![ContentBlock::text(json.to_string())]);
    result.structured_content = Some(json);
    result
}

/// A tool error result with the domain error's message (never internal
/// detail: a database error's text is the generic one).
pub fn error(error: &Error) -> CallToolResult {
    if let Error::Database(cause) = error {
        tracing::error!(error = %cause, "internal error in an MCP tool");
    }
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

/// Either a structured success or an error result.
pub fn from<T: Serialize>(outcome: Result<T, Error>) -> CallToolResult {
    match outcome {
        Ok(value) => structured(&value),
        Err(e) => error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n3a_structured_content_keeps_the_wire_key_order() {
        let answer = clarify_core::Answer {
            question_id: "q1".into(),
            selected_options: vec!["q1_opt1".into()],
            custom_text: String::new(),
        };
        let result = structured(&answer);
        assert_eq!(
            result.structured_content.unwrap().to_string(),
            r#"{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":""}"#
        );
    }
}
