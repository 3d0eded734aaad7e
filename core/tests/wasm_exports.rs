//! The `wasm` feature's JavaScript exports (`core/src/wasm.rs`), called as a
//! page's script calls them: plain JS objects in, JS values or a JS `Error`
//! naming the field out. They exist for pages not written in Rust; this
//! test is their consumer, run by the test command under wasm-bindgen-test
//! in node (natively it compiles to nothing).
#![cfg(all(target_arch = "wasm32", feature = "wasm"))]

use clarify_core::wasm;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test as test;

fn js(json: &str) -> JsValue {
    js_sys::JSON::parse(json).expect("test JSON parses")
}

fn json(value: &JsValue) -> serde_json::Value {
    let text: String = js_sys::JSON::stringify(value).unwrap().into();
    serde_json::from_str(&text).unwrap()
}

fn message(error: wasm_bindgen::JsError) -> String {
    JsValue::from(error)
        .dyn_into::<js_sys::Error>()
        .expect("a JS Error")
        .message()
        .into()
}

const BUNDLE: &str =
    r#"{"questions": [{"prompt": "Ship?", "options": [{"label": "yes"}, {"label": "no"}]}]}"#;

#[test]
fn rune_count_counts_scalar_values_as_the_server_does() {
    assert_eq!(
        wasm::rune_count("héllo👍"),
        6,
        "N8b: runes, not UTF-16 units"
    );
    assert_eq!(wasm::text_limit_error("custom_text", "fine"), None);
    let long = "é".repeat(2001);
    let said = wasm::text_limit_error("custom_text", &long).expect("over the limit");
    assert_eq!(said, "custom_text: is 2001 characters, the limit is 2000");
}

#[test]
fn a_new_bundle_comes_back_with_its_ids_or_an_error_naming_the_field() {
    let questions = json(&wasm::validate_new_bundle(js(BUNDLE)).unwrap());
    assert_eq!(questions[0]["question_id"], "q1");
    assert_eq!(questions[0]["options"][1]["option_id"], "q1_opt2");

    let one_option = r#"{"questions": [{"prompt": "Ship?", "options": [{"label": "yes"}]}]}"#;
    let error = message(wasm::validate_new_bundle(js(one_option)).unwrap_err());
    assert!(error.starts_with("questions[0].options:"), "{error}");
    let not_a_bundle = message(wasm::validate_new_bundle(js(r#""nope""#)).unwrap_err());
    assert!(not_a_bundle.starts_with("bundle:"), "{not_a_bundle}");
}

#[test]
fn a_submission_is_normalized_or_refused_naming_the_field() {
    let questions = wasm::validate_new_bundle(js(BUNDLE)).unwrap();
    let answer = r#"{"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "  go  "}]}"#;
    let normalized = json(&wasm::validate_submission(questions.clone(), js(answer)).unwrap());
    assert_eq!(normalized["answers"][0]["selected_options"][0], "q1_opt1");
    assert_eq!(normalized["rejected"], false);

    let unknown = r#"{"answers": [{"question_id": "q1", "selected_options": ["q9_opt1"]}]}"#;
    let error = message(wasm::validate_submission(questions, js(unknown)).unwrap_err());
    assert!(error.starts_with("answers[0]"), "{error}");
}
