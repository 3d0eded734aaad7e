//! What a notice looks like on ntfy (issue 28 item 2, issue 48 item 1): the
//! JSON published to the server's root naming the topic, with one `http`
//! action per option. With a reply topic (always, when the server runs),
//! an action publishes the option's answer-link token to that topic on the
//! same ntfy server, so a tap never needs the phone to reach Clarify;
//! without one it POSTs to the answer link itself.

use clarify_core::api::{Notice, NoticeAction, NoticeKind};
use serde_json::{Value, json};

use crate::lifecycle::LINK_PATH;

/// ntfy shows at most three action buttons.
const MAX_ACTIONS: usize = 3;

/// Where an option's tap publishes: the reply topic's publish URL, and the
/// `Authorization` ntfy needs to publish there, if any.
#[derive(Debug, Clone, Copy)]
pub struct ReplyTo<'a> {
    /// ntfy's publish URL of the reply topic (`https://ntfy.example/t`).
    pub url: &'a str,
    /// `Bearer …`, when the topics are protected.
    pub authorization: Option<&'a str>,
}

/// The token of an answer link's URL (`…/answer/{token}`).
#[must_use]
pub fn link_token(url: &str) -> Option<&str> {
    url.rsplit_once(&format!("{LINK_PATH}/"))
        .map(|(_, token)| token)
        .filter(|t| !t.is_empty() && !t.contains('/'))
}

/// The button for `action`: a publish of its token to the reply topic, or
/// (without one) a POST to its answer link.
fn button(action: &NoticeAction, reply: Option<ReplyTo<'_>>) -> Value {
    match (reply, link_token(&action.url)) {
        (Some(reply), Some(token)) => {
            let mut button = json!({"action": "http", "label": action.label, "url": reply.url,
                "method": "POST", "body": token, "clear": true});
            if let Some(authorization) = reply.authorization {
                button["headers"] = json!({"Authorization": authorization});
            }
            button
        }
        _ => json!({"action": "http", "label": action.label, "url": action.url,
            "method": "POST", "clear": true}),
    }
}

/// The JSON ntfy is sent for `notice` on `topic`, its buttons replying to
/// `reply` when given.
#[must_use]
pub fn publish(notice: &Notice, topic: &str, reply: Option<ReplyTo<'_>>) -> Value {
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
            call.shown(crate::channels::CALL_CHARS)
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
                crate::channels::chat::answered(notice.answered_by.as_ref())
            ),
            2,
        ),
        NoticeKind::Expired => (format!("Expired: {}", notice.task), first, 2),
        NoticeKind::Cancelled => (format!("Cancelled: {}", notice.task), first, 2),
    };
    let mut actions: Vec<Value> = notice.actions.iter().map(|a| button(a, reply)).collect();
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

/// The notice telling a late reply on `topic` how the question `task`
/// ended (`told`: who won and with what, or that it closed unanswered).
#[must_use]
pub fn told(task: &str, told: &str, topic: &str) -> Value {
    json!({
        "topic": topic,
        "title": format!("Too late: {task}"),
        "message": told,
        "priority": 2,
        "tags": ["question"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let pushed = publish(&approval, "t", None);
        let message = pushed["message"].as_str().unwrap();
        assert!(
            message.starts_with("Bash:\n```\nrm -rf <build>\n```\nWhich"),
            "{message}"
        );
        assert_eq!(pushed["markdown"], true);
        let slack = crate::channels::slack::post(&approval, "C1").to_string();
        assert!(slack.contains("```rm -rf &lt;build&gt;```"), "{slack}");
        let telegram = crate::channels::telegram::send(&approval, "1");
        let text = telegram["text"].as_str().unwrap();
        assert!(text.contains("Bash:\nrm -rf <build>\n\nWhich"), "{text}");
    }

    #[test]
    fn without_a_reply_topic_each_option_posts_to_its_link() {
        let body = publish(&notice(2), "alice", None);
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

    /// issue 48 item 1: a button publishes its link's token to the reply
    /// topic, with the token ntfy needs.
    #[test]
    fn with_a_reply_topic_each_option_publishes_its_token_there() {
        let reply = ReplyTo {
            url: "https://n.example/clarify-r-1",
            authorization: Some("Bearer tk"),
        };
        let body = publish(&notice(2), "alice", Some(reply));
        assert_eq!(
            body["actions"][0],
            json!({"action": "http", "label": "o1", "url": "https://n.example/clarify-r-1",
                   "method": "POST", "body": "clk_link_1", "clear": true,
                   "headers": {"Authorization": "Bearer tk"}})
        );
        let open = ReplyTo {
            url: "https://n.example/r",
            authorization: None,
        };
        let body = publish(&notice(1), "alice", Some(open));
        assert!(body["actions"][0].get("headers").is_none());
        assert_eq!(
            link_token("https://c/answer/clk_link_9"),
            Some("clk_link_9")
        );
        assert_eq!(link_token("https://c/answer/"), None);
        assert_eq!(link_token("https://c/t/x"), None);
    }

    #[test]
    fn past_three_options_two_buttons_and_the_way_to_all() {
        let body = publish(&notice(5), "alice", None);
        let actions = body["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 3);
        assert_eq!(actions[1]["label"], "o2");
        assert_eq!(actions[2]["action"], "view");
        assert_eq!(actions[2]["url"], "https://c.example/t/t");
        assert_eq!(
            publish(&notice(3), "a", None)["actions"]
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
        let body = publish(&resolved, "a", None);
        assert_eq!(
            body["message"],
            "Answered by alice through an answer link: Which <db>?"
        );
        assert_eq!(body["actions"], json!([]));
    }
}
