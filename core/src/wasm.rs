//! The rules exported to JavaScript through wasm-bindgen, for any page that
//! is not itself written in Rust. Values cross as plain JS objects with the
//! same field names as the JSON wire format.

use alloc::string::{String, ToString};
use wasm_bindgen::prelude::*;

use crate::{NewBundle, Question, Submission};

/// Counts the Unicode scalar values in `text` (N8b, W4a).
#[wasm_bindgen(js_name = runeCount)]
#[must_use]
pub fn rune_count(text: &str) -> usize {
    crate::rune_count(text)
}

/// The message for a free text over the limit, or `undefined` when it fits.
#[wasm_bindgen(js_name = textLimitError)]
#[must_use]
pub fn text_limit_error(field: &str, text: &str) -> Option<String> {
    crate::exceeds_text_limit(text).then(|| {
        alloc::format!(
            "{field}: is {} characters, the limit is {}",
            crate::rune_count(text),
            crate::MAX_TEXT_RUNES
        )
    })
}

/// Validates and normalizes a submission against a bundle's questions; the
/// normalized `{answers, rejected, reject_reason}` on success.
///
/// # Errors
/// A JS `Error` whose message names the offending field.
#[wasm_bindgen(js_name = validateSubmission)]
pub fn validate_submission(questions: JsValue, submission: JsValue) -> Result<JsValue, JsError> {
    let questions: alloc::vec::Vec<Question> = from_js(questions, "questions")?;
    let submission: Submission = from_js(submission, "submission")?;
    let outcome = crate::validate_submission(&questions, &submission)
        .map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&outcome.to_response("", ""))
}

/// Validates a new bundle and returns it with every id assigned.
///
/// # Errors
/// A JS `Error` whose message names the offending field.
#[wasm_bindgen(js_name = validateNewBundle)]
pub fn validate_new_bundle(bundle: JsValue) -> Result<JsValue, JsError> {
    let bundle: NewBundle = from_js(bundle, "bundle")?;
    let spec = crate::validate_new_bundle(&bundle).map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&spec.questions)
}

fn from_js<T: serde::de::DeserializeOwned>(value: JsValue, name: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&alloc::format!("{name}: {e}")))
}

fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}
