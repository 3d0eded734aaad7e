//! The renderer's output for the texts agents write.

use super::{block, inline, label};

#[test]
fn a_bundle_carries_each_text_rendered_by_key() {
    let mut bundle: clarify_core::PendingBundle = serde_json::from_value(serde_json::json!({
        "pending_id": "p", "task_id": "t", "session_id": "s", "created_at": "",
        "age_seconds": 0, "context": "See `a<b`",
        "questions": [{"question_id": "q1", "title": "", "prompt": "**Which** [db](https://x.example)?",
            "status": "pending", "options": [
                {"option_id": "q1_opt1", "label": "*SQLite*", "description": ""},
                {"option_id": "q1_opt2", "label": "PG", "description": "<b>big</b>"}]}]
    }))
    .unwrap();
    super::bundle(&mut bundle);
    let keys: Vec<&str> = bundle.html.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "context",
            "q1.prompt",
            "q1.prompt.line",
            "q1_opt1",
            "q1_opt2",
            "q1_opt2.description"
        ]
    );
    assert_eq!(bundle.html["context"], "<p>See <code>a&lt;b</code></p>");
    assert!(bundle.html["q1.prompt"].contains("<a href=\"https://x.example\""));
    assert_eq!(bundle.html["q1.prompt.line"], "Which db?");
    assert_eq!(bundle.html["q1_opt1"], "<em>SQLite</em>");
    assert_eq!(bundle.html["q1_opt2.description"], "&lt;b&gt;big&lt;/b&gt;");
}

#[test]
fn a_message_carries_its_question_rendered() {
    let mut message: clarify_core::api::Message = serde_json::from_value(serde_json::json!({
        "id": "m", "task_session_id": "s", "type": "clarification_request",
        "created_at": "", "updated_at": "",
        "metadata": {"question": {"title": "A _t_", "prompt": "<script>x</script>"}, "context": ""}
    }))
    .unwrap();
    super::message(&mut message);
    assert_eq!(
        message.metadata["html"],
        serde_json::json!({"title": "A <em>t</em>", "prompt": "<p>&lt;script&gt;x&lt;/script&gt;</p>"})
    );
    let mut plain: clarify_core::api::Message = serde_json::from_value(serde_json::json!({
        "id": "m", "task_session_id": "s", "type": "message", "created_at": "", "updated_at": "",
        "content": "hi"
    }))
    .unwrap();
    super::message(&mut plain);
    assert!(plain.metadata.get("html").is_none());
    // HTML the row held itself is never passed on as rendered.
    let mut forged: clarify_core::api::Message = serde_json::from_value(serde_json::json!({
        "id": "m", "task_session_id": "s", "type": "clarification_request",
        "created_at": "", "updated_at": "",
        "metadata": {"question": {"prompt": ""}, "html": {"prompt": "<img src=x onerror=alert(1)>"}}
    }))
    .unwrap();
    super::message(&mut forged);
    assert!(forged.metadata.get("html").is_none(), "{}", forged.metadata);
}

#[test]
fn commonmark_renders_code_emphasis_lists_and_fences() {
    assert_eq!(
        block("Use **bold** and `a<b`"),
        "<p>Use <strong>bold</strong> and <code>a&lt;b</code></p>"
    );
    assert_eq!(
        block("- one\n- two"),
        "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n".replace('\n', "")
    );
    assert_eq!(
        block("```rust\nfn main() {}\n```"),
        "<pre tabindex=\"0\"><code class=\"language-rust\">fn main() {}\n</code></pre>"
    );
    assert_eq!(block("3. three"), "<ol start=\"3\"><li>three</li></ol>");
    assert_eq!(
        block("# Title"),
        "<p class=\"md-heading\"><strong>Title</strong></p>"
    );
}

#[test]
fn raw_html_is_shown_as_text() {
    let html = block("<script>alert(1)</script>\n\nhi <img src=x onerror=alert(1)>");
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
}

#[test]
fn links_open_safely_and_only_for_web_and_mail() {
    assert_eq!(
        inline("[docs](https://example.com/a?b=\"c\")"),
        "<a href=\"https://example.com/a?b=&quot;c&quot;\" rel=\"noopener noreferrer\" target=\"_blank\">docs</a>"
    );
    assert_eq!(inline("[x](javascript:alert(1))"), "<span>x</span>");
    assert_eq!(inline("[x]( JaVaScRiPt:alert(1))"), "<span>x</span>");
    assert_eq!(
        inline("![pixel](data:image/png;base64,AAAA)"),
        "<span>pixel</span>"
    );
    assert_eq!(label("[docs](https://example.com)"), "<span>docs</span>");
}

#[test]
fn inline_text_has_no_blocks() {
    assert_eq!(
        inline("Use **this**\n\nor that"),
        "Use <strong>this</strong> or that"
    );
    assert_eq!(inline("- a list"), "a list");
}

/// Issue 47: an approval's call is code, escaped, never Markdown.
#[test]
fn an_approvals_call_is_escaped_code() {
    assert_eq!(
        super::tool_call("Bash", "rm -rf *.md <x>"),
        "<p class=\"tool-name\">Allow <code>Bash</code> to run:</p>\
         <pre tabindex=\"0\"><code>rm -rf *.md &lt;x&gt;</code></pre>"
    );
}

/// Issue 46 item 11: a Markdown table is a table, never raw pipes.
#[test]
fn a_table_renders_as_a_table_in_a_box_that_scrolls() {
    assert_eq!(
        block("| a | b |\n|---|---|\n| 1 | <2> |"),
        "<div class=\"table\" tabindex=\"0\"><table><thead><tr><th>a</th><th>b</th></tr></thead>\
         <tbody><tr><td>1</td><td>&lt;2&gt;</td></tr></tbody></table></div>"
    );
    assert_eq!(label("| a | b |\n|---|---|\n| 1 | 2 |"), " a b 1 2");
}
