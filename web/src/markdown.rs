//! Agent-written text (titles, prompts, options, context) rendered as
//! CommonMark with pulldown-cmark into HTML that is safe to insert: every
//! piece of text is escaped, raw HTML is shown as text, never injected, and
//! a link leaves only for http(s) or mailto, with `rel="noopener noreferrer"`.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

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
    for c in text.chars() {
        match c {
            '&' => html.push_str("&amp;"),
            '<' => html.push_str("&lt;"),
            '>' => html.push_str("&gt;"),
            '"' => html.push_str("&quot;"),
            '\'' => html.push_str("&#39;"),
            c => html.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{block, inline, label};

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
