//! The safe HTML the server rendered for an agent's text (the overlay
//! parses no Markdown: issue 31 item 4), or, where it sent none, the text
//! itself escaped.

use std::collections::BTreeMap;

/// The server's HTML for `key`, else `text` escaped.
pub fn of(html: &BTreeMap<String, String>, key: &str, text: &str) -> String {
    html.get(key).cloned().unwrap_or_else(|| escape(text))
}

/// `text` HTML-escaped, quotes included.
pub fn escape(text: &str) -> String {
    html_escape::encode_quoted_attribute(text).into_owned()
}

/// `text` with its `code` spans as code, for a server message shown as
/// text (issue 46 item 11: the login error showed its backticks).
pub fn with_code(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", escape(part))
            } else {
                escape(part)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[test]
    fn the_servers_html_or_the_text_escaped() {
        let html = BTreeMap::from([("q1.prompt".to_owned(), "<p><em>x</em></p>".to_owned())]);
        assert_eq!(super::of(&html, "q1.prompt", "*x*"), "<p><em>x</em></p>");
        assert_eq!(
            super::of(&html, "q1.title", "<b>\"a\"</b>"),
            "&lt;b&gt;&quot;a&quot;&lt;/b&gt;"
        );
    }

    #[test]
    fn backticks_become_code() {
        assert_eq!(
            super::with_code("run `a<b` now"),
            "run <code>a&lt;b</code> now"
        );
    }
}
