//! ntfy (issue 28, item 2): a notice published to an ntfy topic as JSON
//! (ntfy's "publish as JSON": a POST to the server's root URL naming the
//! topic), so a phone shows it with one button per option, each an `http`
//! action that POSTs to the option's answer link: one tap on the lock
//! screen answers.
//!
//! An ntfy target is kept in the outbox as `ntfy:` and its topic URL, so
//! the row says how it is sent; the body stays the notice, made into
//! ntfy's shape when it is sent.

use clarify_core::api::{Notice, NoticeKind};
use serde_json::{Value, json};

use crate::db::notifications::Outgoing;
use crate::resume::{Sent, Webhooks};

/// How an ntfy topic is named in the outbox's `target`.
const SCHEME: &str = "ntfy:";

/// ntfy shows at most three action buttons.
const MAX_ACTIONS: usize = 3;

/// The outbox target for the topic at `topic_url`.
#[must_use]
pub fn target(topic_url: &str) -> String {
    format!("{SCHEME}{topic_url}")
}

/// The topic URL of an outbox target, if it is an ntfy one.
#[must_use]
pub fn topic_url(target: &str) -> Option<&str> {
    target.strip_prefix(SCHEME)
}

/// Where to publish for `topic_url` (`https://ntfy.example/alice`): the
/// server's root URL, and the topic.
///
/// # Errors
/// A URL that is not http(s) or names no topic, phrased for `--notify-ntfy`.
pub fn split(topic_url: &str) -> Result<(String, String), String> {
    const MUST: &str = "--notify-ntfy: must be a topic's URL, such as https://ntfy.sh/your-topic";
    let mut url = reqwest::Url::parse(topic_url).map_err(|_| MUST.to_owned())?;
    if !matches!(url.scheme(), "http" | "https") || url.query().is_some() {
        return Err(MUST.to_owned());
    }
    let path = url.path().trim_end_matches('/').to_owned();
    let (root, topic) = path.rsplit_once('/').ok_or_else(|| MUST.to_owned())?;
    if topic.is_empty()
        || !topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
    {
        return Err(MUST.to_owned());
    }
    url.set_path(&format!("{root}/"));
    Ok((url.to_string(), topic.to_owned()))
}

/// The JSON ntfy is sent for `notice` on `topic`.
#[must_use]
pub fn publish(notice: &Notice, topic: &str) -> Value {
    let mut more = String::new();
    if notice.questions.len() > 1 {
        more = format!(" (+{} more)", notice.questions.len() - 1);
    }
    let asked = notice.questions.first().map_or("", String::as_str);
    // An approval's call first, as code (ntfy renders Markdown when asked).
    let first = match &notice.tool_call {
        Some(call) => format!(
            "{}:\n```\n{}\n```\n{asked}",
            call.tool,
            call.shown(super::CALL_CHARS)
        ),
        None => asked.to_owned(),
    };
    let (title, message, priority) = match notice.event {
        NoticeKind::Waiting => (
            format!("An agent is waiting: {}", notice.task),
            format!("{first}{more}"),
            4,
        ),
        NoticeKind::Reminder => (
            format!("Still waiting: {}", notice.task),
            format!("{first}{more} It expires at {}.", notice.expires_at),
            4,
        ),
        NoticeKind::Resolved => (
            format!("Answered: {}", notice.task),
            format!(
                "{}: {first}{more}",
                super::chat::answered(notice.answered_by.as_ref())
            ),
            2,
        ),
        NoticeKind::Expired => (format!("Expired: {}", notice.task), first, 2),
        NoticeKind::Cancelled => (format!("Cancelled: {}", notice.task), first, 2),
    };
    let mut actions: Vec<Value> = notice
        .actions
        .iter()
        .map(|a| {
            json!({"action": "http", "label": a.label, "url": a.url, "method": "POST", "clear": true})
        })
        .collect();
    if actions.len() > MAX_ACTIONS {
        // Two options and the way to all of them.
        actions.truncate(MAX_ACTIONS - 1);
        actions.push(json!({"action": "view", "label": "More…", "url": notice.url}));
    }
    json!({
        "topic": topic,
        "title": title,
        "message": message,
        "priority": priority,
        "tags": ["question"],
        "markdown": notice.tool_call.is_some(),
        "click": notice.url,
        "actions": actions,
    })
}

/// One attempt at `row` (already claimed) for the topic at `topic_url`,
/// published with `token` (`Bearer`) if any; `None` for a row that can
/// never be sent (its topic URL or its notice does not parse).
pub(super) async fn send(
    webhooks: &Webhooks,
    row: &Outgoing,
    topic_url: &str,
    token: Option<&str>,
    what: &str,
) -> Option<Sent> {
    let (Ok((root, topic)), Ok(notice)) =
        (split(topic_url), serde_json::from_str::<Notice>(&row.body))
    else {
        return None;
    };
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers = super::webhook::headers(row);
    headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
    let body = publish(&notice, &topic).to_string();
    Some(webhooks.post(&root, body, &headers, what).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clarify_core::api::NoticeAction;
    use clarify_core::{AnsweredBy, Channel};

    fn notice(options: usize) -> Notice {
        Notice {
            event: NoticeKind::Waiting,
            text: String::new(),
            pending_id: "p".into(),
            task_id: "t".into(),
            task: "R&D".into(),
            session_id: "s".into(),
            questions: vec!["Which <db>?".into()],
            url: "https://c.example/t/t".into(),
            answered_by: None,
            expires_at: String::new(),
            actions: (1..=options)
                .map(|n| NoticeAction {
                    label: format!("o{n}"),
                    option_id: format!("q1_opt{n}"),
                    url: format!("https://c.example/answer/clk_link_{n}"),
                })
                .collect(),
            assignee: String::new(),
            tool_call: None,
        }
    }

    /// issue 47 item 1: an approval's call, as code, before the options,
    /// in the push, in Slack (escaped as Slack asks) and in Telegram.
    #[test]
    fn an_approval_shows_its_call_as_code_before_the_options() {
        let mut approval = notice(2);
        approval.tool_call = Some(clarify_core::ToolCall {
            tool: "Bash".into(),
            call: "rm -rf <build>".into(),
        });
        let pushed = publish(&approval, "t");
        let message = pushed["message"].as_str().unwrap();
        assert!(
            message.starts_with("Bash:\n```\nrm -rf <build>\n```\nWhich"),
            "{message}"
        );
        assert_eq!(pushed["markdown"], true);
        let slack = super::super::slack::post(&approval, "C1").to_string();
        assert!(slack.contains("```rm -rf &lt;build&gt;```"), "{slack}");
        let telegram = super::super::telegram::send(&approval, "1");
        let text = telegram["text"].as_str().unwrap();
        assert!(text.contains("Bash:\nrm -rf <build>\n\nWhich"), "{text}");
    }

    #[test]
    fn a_topic_url_splits_into_the_root_and_the_topic() {
        assert_eq!(
            split("https://ntfy.example/clarify-alice").unwrap(),
            (
                "https://ntfy.example/".to_owned(),
                "clarify-alice".to_owned()
            )
        );
        assert_eq!(
            split("http://127.0.0.1:81/ntfy/alice/").unwrap(),
            ("http://127.0.0.1:81/ntfy/".to_owned(), "alice".to_owned())
        );
        for bad in [
            "https://ntfy.example/",
            "ftp://x/t",
            "https://x/t?a=1",
            "nope",
            "https://x/a b",
        ] {
            assert!(split(bad).is_err(), "{bad}");
        }
        assert_eq!(topic_url(&target("https://n/t")), Some("https://n/t"));
        assert_eq!(topic_url("https://hooks.example/x"), None);
    }

    #[test]
    fn each_option_is_a_button_that_posts_to_its_link() {
        let body = publish(&notice(2), "alice");
        assert_eq!(body["topic"], "alice");
        assert_eq!(
            body["title"], "An agent is waiting: R&D",
            "plain text, unescaped"
        );
        assert_eq!(body["message"], "Which <db>?");
        assert_eq!(body["click"], "https://c.example/t/t");
        assert_eq!(
            body["actions"][1],
            json!({"action": "http", "label": "o2", "url": "https://c.example/answer/clk_link_2",
                   "method": "POST", "clear": true})
        );
    }

    #[test]
    fn past_three_options_two_buttons_and_the_way_to_all() {
        let body = publish(&notice(5), "alice");
        let actions = body["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 3);
        assert_eq!(actions[1]["label"], "o2");
        assert_eq!(actions[2]["action"], "view");
        assert_eq!(actions[2]["url"], "https://c.example/t/t");
        assert_eq!(
            publish(&notice(3), "a")["actions"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn a_resolved_notice_says_who() {
        let mut resolved = notice(0);
        resolved.event = NoticeKind::Resolved;
        resolved.answered_by = Some(AnsweredBy::new("alice", Channel::Link, "ntfy"));
        let body = publish(&resolved, "a");
        assert_eq!(
            body["message"],
            "Answered by alice through an answer link: Which <db>?"
        );
        assert_eq!(body["actions"], json!([]));
    }
}
