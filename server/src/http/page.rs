//! The frame of a page the server writes itself (an answer link's, the
//! Activity page): the overlay's header and stylesheet, light and dark,
//! phone width, no script.

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};

/// Where a page's heading leads: an answer link's page links nowhere, so
/// its capability URL never leaves in a `Referer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heading {
    Plain,
    Home,
}

/// A whole document titled `title`, holding `body` in a section labelled
/// `label` of class `class` (both fixed strings of this crate).
pub fn document(heading: Heading, title: &str, label: &str, class: &str, body: &str) -> String {
    let heading = match heading {
        Heading::Plain => "<h1>Clarify</h1>",
        Heading::Home => "<h1><a href=\"/\">Clarify</a></h1>",
    };
    let stylesheet = crate::web_assets::STYLESHEET;
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <title>{} · Clarify</title><link rel=\"stylesheet\" href=\"{}\"></head>\
         <body><header>{heading}</header>\
         <main><section class=\"{class}\" aria-label=\"{label}\">{body}</section>\
         </main></body></html>",
        text(title),
        attr(stylesheet),
    )
}
