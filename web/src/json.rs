//! JSON read and written by the browser's own `JSON` (issue 31 item 4):
//! serde then walks JavaScript values instead of parsing text, and the
//! module carries no JSON parser of its own for each wire type.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `text` parsed into `T`.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value = js_sys::JSON::parse(text).map_err(|_| "not JSON".to_owned())?;
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

/// `text` parsed once and read as two types (each ignores what the other
/// reads): a view that extends another shape, without `#[serde(flatten)]`.
pub fn parse_twice<A: DeserializeOwned, B: DeserializeOwned>(text: &str) -> Result<(A, B), String> {
    let value = js_sys::JSON::parse(text).map_err(|_| "not JSON".to_owned())?;
    let a = serde_wasm_bindgen::from_value(value.clone()).map_err(|e| e.to_string())?;
    let b = serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())?;
    Ok((a, b))
}

/// `value` as JSON text: objects as objects (not `Map`s), as the server reads them.
pub fn stringify<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    let js = value.serialize(&serializer).map_err(|e| e.to_string())?;
    js_sys::JSON::stringify(&js)
        .map(String::from)
        .map_err(|_| "not serializable".to_owned())
}
