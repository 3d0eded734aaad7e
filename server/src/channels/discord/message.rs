//! The REST bodies of a notice in Discord: `POST
//! /channels/{id}/messages` for a waiting bundle, a reply for a reminder,
//! `PATCH /channels/{id}/messages/{message}` for its end. Everything an
//! agent wrote is escaped (no markdown, no link, no mention), and
//! `allowed_mentions` is empty besides, so nobody is pinged.

use clarify_core::api::Notice;
use serde_json::{Value, json};

/// Discord's bound on a message's `content`, in characters.
pub const MAX_CONTENT: usize = 2_000;

/// Discord's bound on a button's `custom_id`, in characters.
pub const MAX_CUSTOM_ID: usize = 100;

/// Discord's bound on a button's label, in characters.
const MAX_LABEL: usize = 80;

/// Buttons in one action row, and rows in one message.
const PER_ROW: usize = 5;
const ROWS: usize = 5;

/// `text` with every character Discord's markdown (or a mention, a
/// channel link, a masked link) could read escaped by a backslash.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '*'
                | '_'
                | '~'
                | '`'
                | '|'
                | '>'
                | '<'
                | '#'
                | '-'
                | '['
                | ']'
                | '('
                | ')'
                | '@'
                | ':'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` cut to Discord's bound.
fn bounded(text: String) -> String {
    if text.chars().count() <= MAX_CONTENT {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_CONTENT - 1).collect();
    cut.push('…');
    cut
}

/// The questions, escaped, one per line; an approval's call first, as a
/// code block.
fn questions(notice: &Notice) -> String {
    let call = notice.tool_call.as_ref().map_or_else(String::new, |c| {
        // In a code block only a fence could end it early.
        let shown = c
            .shown(super::super::CALL_CHARS)
            .replace("```", "`\u{200b}``");
        format!("**{}**\n```\n{shown}\n```\n", escape(&c.tool))
    });
    call + &match notice.questions.as_slice() {
        [one] => escape(one),
        many => many
            .iter()
            .map(|q| format!("• {}", escape(q)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Nobody pinged, whatever the text holds.
fn no_mentions() -> Value {
    json!({"parse": []})
}

/// The body posting a waiting `notice`; `public` when the overlay's link
/// reaches the person (the server has a public URL).
#[must_use]
pub fn post(notice: &Notice, public: bool) -> Value {
    let whom = match notice.assignee.as_str() {
        "" => String::new(),
        name => format!(" (for {})", escape(name)),
    };
    let mut content = format!(
        "**An agent is waiting on “{}”**{whom}\n{}",
        escape(&notice.task),
        questions(notice)
    );
    if !notice.expires_at.is_empty() {
        content.push_str(&format!("\nIt expires at {}.", escape(&notice.expires_at)));
    }
    let buttons: Vec<Value> = notice
        .actions
        .iter()
        .take(PER_ROW * ROWS)
        .filter_map(|a| {
            let token = super::super::slack::token_of(&a.url);
            let label: String = a.label.chars().take(MAX_LABEL).collect();
            (token.chars().count() <= MAX_CUSTOM_ID)
                .then(|| json!({"type": 2, "style": 1, "label": label, "custom_id": token}))
        })
        .collect();
    let components: Vec<Value> = if !buttons.is_empty() && buttons.len() == notice.actions.len() {
        buttons
            .chunks(PER_ROW)
            .map(|row| json!({"type": 1, "components": row}))
            .collect()
    } else if public {
        vec![json!({"type": 1, "components": [
            {"type": 2, "style": 5, "label": "Answer in Clarify", "url": notice.url}]})]
    } else {
        // Nobody outside can reach the server: the person answers in
        // Clarify wherever they have it open.
        content.push_str("\nAnswer it in Clarify.");
        Vec::new()
    };
    json!({"content": bounded(content), "components": components,
        "allowed_mentions": no_mentions()})
}

/// The body editing the message to how it ended, `outcome` ("Answered by
/// alice in Discord: Postgres"), buttons gone.
#[must_use]
pub fn update(notice: &Notice, outcome: &str) -> Value {
    let content = format!("**{}**\n{}", escape(outcome), questions(notice));
    json!({"content": bounded(content), "components": [], "allowed_mentions": no_mentions()})
}

/// A reminder, as a reply to the message `message_id`.
#[must_use]
pub fn remind(notice: &Notice, message_id: &str) -> Value {
    json!({"content": format!("Reminder: still waiting; it expires at {}.", escape(&notice.expires_at)),
        "message_reference": {"message_id": message_id, "fail_if_not_exists": false},
        "allowed_mentions": no_mentions()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_written_can_become_markup_a_link_or_a_mention() {
        assert_eq!(
            escape("**Ship** <@123> [x](http://e) `rm` @everyone"),
            r"\*\*Ship\*\* \<\@123\> \[x\]\(http\://e\) \`rm\` \@everyone"
        );
    }

    #[test]
    fn content_is_held_to_discords_bound() {
        let long = bounded("x".repeat(5_000));
        assert_eq!(long.chars().count(), MAX_CONTENT);
    }
}
