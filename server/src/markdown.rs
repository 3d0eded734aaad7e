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
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde_json::Value;

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
        put(format!("{}.prompt.line", q.question_id), &q.prompt, label);
        for o in &q.options {
            put(o.option_id.clone(), &o.label, label);
            put(
                format!("{}.description", o.option_id),
                &o.description,
                label,
            );
        }
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

fn render(text: &str, inline: bool, links: bool) -> String {
    let mut out = Renderer {
        html: String::with_capacity(text.len() + text.len() / 2),
        inline,
        allow_links: links,
        paragraphs: 0,
        links: Vec::new(),
    };
    for event in Parser::new(text) {
        out.event(event);
    }
    out.html
}

/// The HTML written so far, and what is open.
struct Renderer {
    html: String,
    /// One line: no block elements.
    inline: bool,
    /// Links become anchors (when their URL is safe).
    allow_links: bool,
    /// Blocks seen so far (inline: a space goes between them).
    paragraphs: usize,
    /// Per open link or image: whether it became an anchor (else a span).
    links: Vec<bool>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => escape(&mut self.html, &t),
            Event::Code(t) => {
                self.html.push_str("<code>");
                escape(&mut self.html, &t);
                self.html.push_str("</code>");
            }
            Event::SoftBreak => self.html.push('\n'),
            Event::HardBreak => self.push(if self.inline { " " } else { "<br>" }),
            Event::Rule if !self.inline => self.push("<hr>"),
            // Extensions this parser is not asked for (math, footnotes,
            // task lists), and a rule inside a line, render as nothing.
            _ => {}
        }
    }

    fn push(&mut self, text: &str) {
        self.html.push_str(text);
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::Heading { .. } if self.inline => {
                if self.paragraphs > 0 {
                    self.push(" ");
                }
                self.paragraphs += 1;
            }
            Tag::Emphasis => self.push("<em>"),
            Tag::Strong => self.push("<strong>"),
            Tag::Strikethrough => self.push("<del>"),
            // An image is not fetched (a tracking pixel would tell a third
            // party who reads the question): it becomes a link to itself.
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let safe = self.allow_links && is_safe_url(&dest_url);
                if safe {
                    self.push("<a href=\"");
                    escape(&mut self.html, &dest_url);
                    self.push("\" rel=\"noopener noreferrer\" target=\"_blank\">");
                } else {
                    self.push("<span>");
                }
                self.links.push(safe);
            }
            _ if self.inline => {}
            // A prompt's headings would break the page's outline: they
            // stand out in bold instead.
            Tag::Heading { .. } => self.push("<p class=\"md-heading\"><strong>"),
            Tag::Paragraph | Tag::HtmlBlock => self.push("<p>"),
            Tag::BlockQuote(_) => self.push("<blockquote>"),
            Tag::CodeBlock(kind) => {
                self.push("<pre><code");
                if let CodeBlockKind::Fenced(lang) = kind
                    && let Some(lang) = lang.split_whitespace().next()
                {
                    self.push(" class=\"language-");
                    escape(&mut self.html, lang);
                    self.push("\"");
                }
                self.push(">");
            }
            Tag::List(Some(1)) => self.push("<ol>"),
            Tag::List(Some(first)) => {
                let open = format!("<ol start=\"{first}\">");
                self.push(&open);
            }
            Tag::List(None) => self.push("<ul>"),
            Tag::Item => self.push("<li>"),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Emphasis => self.push("</em>"),
            TagEnd::Strong => self.push("</strong>"),
            TagEnd::Strikethrough => self.push("</del>"),
            TagEnd::Link | TagEnd::Image => {
                let anchor = self.links.pop().unwrap_or(false);
                self.push(if anchor { "</a>" } else { "</span>" });
            }
            _ if self.inline => {}
            TagEnd::Heading(_) => self.push("</strong></p>"),
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.push("</p>"),
            TagEnd::BlockQuote(_) => self.push("</blockquote>"),
            TagEnd::CodeBlock => self.push("</code></pre>"),
            TagEnd::List(true) => self.push("</ol>"),
            TagEnd::List(false) => self.push("</ul>"),
            TagEnd::Item => self.push("</li>"),
            _ => {}
        }
    }
}

/// Only links a person can safely follow: `javascript:`, `data:` and the
/// like are shown as text.
fn is_safe_url(url: &str) -> bool {
    let url = url.trim_start().to_ascii_lowercase();
    ["https://", "http://", "mailto:"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
}

/// HTML-escapes `text` into `html`, quotes included (it may be an attribute).
fn escape(html: &mut String, text: &str) {
    html_escape::encode_quoted_attribute_to_string(text, html);
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            bundle.html["q1.prompt.line"],
            "<strong>Which</strong> <span>db</span>?"
        );
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
            "<pre><code class=\"language-rust\">fn main() {}\n</code></pre>"
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
}
