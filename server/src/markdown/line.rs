//! A text's first line as plain words, for a row that must stay one line
//! (issue 46 item 1): a long prompt's code, tables and lists wait for the
//! opened row.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::escape;

/// The longest first line kept, in characters; the row's CSS cuts it to
/// the width it has, this only bounds what is sent.
const MAX_CHARS: usize = 160;

/// The first line of `text` that has words, without its Markdown (a table's
/// header cells joined by " · "), escaped for HTML.
pub fn first_line(text: &str) -> String {
    let mut line = String::new();
    let mut cells = 0_usize;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                // A code block's text holds its newlines: its first line ends it.
                let (first, ended) = match t.split_once('\n') {
                    Some((first, _)) => (first, true),
                    None => (&*t, false),
                };
                line.push_str(first);
                if ended && !line.trim().is_empty() {
                    break;
                }
            }
            Event::SoftBreak | Event::HardBreak if !line.trim().is_empty() => break,
            Event::Start(Tag::TableCell) => {
                if cells > 0 {
                    line.push_str(" · ");
                }
                cells += 1;
            }
            Event::End(TagEnd::TableHead) => break,
            Event::End(
                TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::CodeBlock | TagEnd::Item,
            ) if !line.trim().is_empty() => break,
            _ => {}
        }
    }
    let line = line.trim();
    let mut out = String::new();
    match line.char_indices().nth(MAX_CHARS) {
        Some((at, _)) => {
            escape(&mut out, line[..at].trim_end());
            out.push('…');
        }
        None => escape(&mut out, line),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn a_row_gets_the_first_line_of_words_without_markdown() {
        assert_eq!(first_line("**Which** `db`?\nMore here."), "Which db?");
        assert_eq!(
            first_line("```rust\nfn next_delay() {}\n```\nRetry?"),
            "fn next_delay() {}"
        );
        assert_eq!(
            first_line("| Option | Cost |\n|---|---|\n| A | 1 |"),
            "Option · Cost"
        );
        assert_eq!(first_line("\n\n- first item\n- second"), "first item");
        assert_eq!(first_line("# Pick <one>\n\nbody"), "Pick &lt;one&gt;");
        let long = "word ".repeat(100);
        let cut = first_line(&long);
        assert!(cut.ends_with('…') && cut.chars().count() <= 161, "{cut}");
    }
}
