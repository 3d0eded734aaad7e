//! Agent-written text (titles, prompts, options, context) rendered as
//! CommonMark with pulldown-cmark into HTML that is safe to insert: every
//! piece of text is escaped, raw HTML is shown as text, never injected, and
//! a link leaves only for http(s) or mailto, with `rel="noopener noreferrer"`.
//!
//! Rendered here, once, and sent beside the text in the views the browser
//! reads (issue 31 item 4): the overlay then carries no Markdown parser
//! (55–69 KB of its wasm), and the page's CSP still forbids any script.

use std::collections::BTreeMap;

use clarify_core::PendingBundle;
use clarify_core::api::Message;
use serde_json::Value;

mod line;
mod render;
#[cfg(test)]
mod tests;

pub use line::first_line;
use render::render;

/// Fills `bundle.html` (see [`PendingBundle::html`] for its keys).
pub fn bundle(bundle: &mut PendingBundle) {
    let mut html = BTreeMap::new();
    let mut put = |key: String, text: &str, render: fn(&str) -> String| {
        if !text.is_empty() {
            html.insert(key, render(text));
        }
    };
    put("context".into(), &bundle.context, block);
    for q in &bundle.questions {
        put(format!("{}.title", q.question_id), &q.title, inline);
        put(format!("{}.prompt", q.question_id), &q.prompt, block);
        put(
            format!("{}.prompt.line", q.question_id),
            &q.prompt,
            first_line,
        );
        for o in &q.options {
            put(o.option_id.clone(), &o.label, label);
            put(
                format!("{}.description", o.option_id),
                &o.description,
                label,
            );
        }
    }
    // An approval's call, as code and never as Markdown (issue 47: "the
    // call, then the buttons"): the overlay inserts it before the card.
    if let Some(call) = &bundle.tool_call {
        html.insert("tool_call".into(), tool_call(&call.tool, &call.call));
    }
    bundle.html = html;
}

/// Adds `metadata.html` to a clarification message (`title` and `prompt`
/// of its question, the bundle's `context`), for the transcript.
pub fn message(message: &mut Message) {
    let Value::Object(meta) = &mut message.metadata else {
        return;
    };
    let text = |value: Option<&Value>| value.and_then(Value::as_str).unwrap_or("").to_owned();
    let question = meta.get("question");
    let parts = [
        (
            "title",
            text(question.and_then(|q| q.get("title"))),
            inline as fn(&str) -> String,
        ),
        (
            "prompt",
            text(question.and_then(|q| q.get("prompt"))),
            block,
        ),
        ("context", text(meta.get("context")), block),
    ];
    let html: serde_json::Map<String, Value> = parts
        .into_iter()
        .filter(|(_, text, _)| !text.is_empty())
        .map(|(key, text, render)| (key.to_owned(), Value::String(render(&text))))
        .collect();
    // Whatever the row held under that key is never what the browser
    // inserts as HTML: only what was rendered here.
    meta.remove("html");
    if !html.is_empty() {
        meta.insert("html".into(), Value::Object(html));
    }
}

/// An approval's tool and call: the tool named, the call as a code block
/// that scrolls (and takes focus) when wide.
pub fn tool_call(tool: &str, call: &str) -> String {
    let mut html = String::from("<p class=\"tool-name\">Allow <code>");
    escape(&mut html, tool);
    html.push_str("</code> to run:</p><pre tabindex=\"0\"><code>");
    escape(&mut html, call);
    html.push_str("</code></pre>");
    html
}

/// `text` as blocks: paragraphs, lists, code blocks, quotes.
pub fn block(text: &str) -> String {
    render(text, false, true)
}

/// `text` as one line of inline content (a title): paragraphs run
/// together, so it fits inside a heading.
pub fn inline(text: &str) -> String {
    render(text, true, true)
}

/// Like [`inline`], with links as plain text: an option is a button, and a
/// link inside a button could not be reached or told apart.
pub fn label(text: &str) -> String {
    render(text, true, false)
}

/// Only links a person can safely follow: `javascript:`, `data:` and the
/// like are shown as text.
pub(super) fn is_safe_url(url: &str) -> bool {
    let url = url.trim_start().to_ascii_lowercase();
    ["https://", "http://", "mailto:"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
}

/// HTML-escapes `text` into `html`, quotes included (it may be an attribute).
pub(super) fn escape(html: &mut String, text: &str) {
    html_escape::encode_quoted_attribute_to_string(text, html);
}
