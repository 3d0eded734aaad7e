//! The CommonMark events of one text written out as safe HTML.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::{escape, is_safe_url};

pub(super) fn render(text: &str, inline: bool, links: bool) -> String {
    let mut out = Renderer {
        html: String::with_capacity(text.len() + text.len() / 2),
        inline,
        allow_links: links,
        paragraphs: 0,
        links: Vec::new(),
        in_head: false,
    };
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
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
    /// Inside a table's head row: its cells are `th`.
    in_head: bool,
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
            // Cells of a table flattened into one line stay apart.
            Tag::TableCell if self.inline => self.push(" "),
            _ if self.inline => {}
            // A wide table scrolls inside its own box on a phone, never the
            // page (issue 46 item 11); the box takes focus, so a keyboard
            // scrolls it too.
            Tag::Table(_) => self.push("<div class=\"table\" tabindex=\"0\"><table>"),
            Tag::TableHead => {
                self.in_head = true;
                self.push("<thead><tr>");
            }
            Tag::TableRow => self.push("<tr>"),
            Tag::TableCell => self.push(if self.in_head { "<th>" } else { "<td>" }),
            // A prompt's headings would break the page's outline: they
            // stand out in bold instead.
            Tag::Heading { .. } => self.push("<p class=\"md-heading\"><strong>"),
            Tag::Paragraph | Tag::HtmlBlock => self.push("<p>"),
            Tag::BlockQuote(_) => self.push("<blockquote>"),
            // A long line scrolls inside the block, which takes focus for
            // a keyboard as a table's box does.
            Tag::CodeBlock(kind) => {
                self.push("<pre tabindex=\"0\"><code");
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
            TagEnd::Table => self.push("</tbody></table></div>"),
            TagEnd::TableHead => {
                self.in_head = false;
                self.push("</tr></thead><tbody>");
            }
            TagEnd::TableRow => self.push("</tr>"),
            TagEnd::TableCell => self.push(if self.in_head { "</th>" } else { "</td>" }),
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
