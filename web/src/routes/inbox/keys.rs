//! The inbox at keyboard speed (issue 29 item 4): which key was typed
//! into a field, the rows' buttons in order, focusing one.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// Whether a key was pressed while typing, where letters are letters.
pub(super) fn typing(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| matches!(e.tag_name().as_str(), "TEXTAREA" | "INPUT" | "SELECT"))
}

/// The rows' buttons, in order.
pub(super) fn row_buttons() -> Vec<web_sys::Element> {
    let Ok(list) = document().query_selector_all("[data-testid=inbox-row] > button.row") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<web_sys::Element>().ok())
        .collect()
}

/// Focuses the `at`-th row's button (0-based), if there is one.
pub(super) fn focus_row(at: usize) {
    if let Some(button) = row_buttons()
        .into_iter()
        .nth(at)
        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = button.focus();
    }
}

/// Focuses the row of `pending_id`, if it is shown.
pub(super) fn focus_pending(pending_id: &str) {
    if let Some(at) = row_buttons().iter().position(|b| {
        b.parent_element()
            .and_then(|row| row.get_attribute("data-pending-id"))
            .is_some_and(|id| id == pending_id)
    }) {
        focus_row(at);
    }
}
