//! What people following the queue are told: a bundle started waiting, or
//! stopped, or is about to expire (`GET /pending/stream` and the operator
//! webhooks send the same body).

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::approval::ToolCall;
use crate::provenance::{AnsweredBy, Channel};

/// What a notice tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// The bundle started waiting for an answer.
    Waiting,
    /// Answered or declined.
    Resolved,
    /// Its time ran out unanswered.
    Expired,
    /// The agent cancelled it.
    Cancelled,
    /// Webhooks only: 80% of its time to expiry has passed.
    Reminder,
}

impl NoticeKind {
    /// The wire spelling (also the outbox's `event` column).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Resolved => "resolved",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
            Self::Reminder => "reminder",
        }
    }
}

/// One notice, every key always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Notice {
    /// What it tells.
    pub event: NoticeKind,
    /// A readable line, with the link to answer while it waits (what a
    /// Slack or Mattermost incoming webhook shows). Whatever in it came
    /// from an agent or a person (the task, the prompt, a name) has `&`,
    /// `<` and `>` escaped as Slack's message formatting asks, so it can
    /// never become a link, a mention or markup; the other fields are as
    /// written.
    pub text: String,
    /// The bundle.
    pub pending_id: String,
    /// Its task.
    pub task_id: String,
    /// The task's title.
    pub task: String,
    /// Its session.
    pub session_id: String,
    /// The questions' prompts, in order.
    pub questions: Vec<String>,
    /// Where to answer it.
    pub url: String,
    /// Who resolved it; `null` until then.
    pub answered_by: Option<AnsweredBy>,
    /// When it expires unanswered (RFC 3339); `""` for never.
    pub expires_at: String,
    /// For a `waiting` or `reminder` notice of a bundle of one question
    /// that is not multi-select, one answer link per option (issue 28);
    /// empty otherwise (its `url` opens the overlay).
    #[serde(default)]
    pub actions: Vec<NoticeAction>,
    /// Who it is for (a user name), `""` for nobody in particular (issue
    /// 29 item 6); the text names them too.
    #[serde(default)]
    pub assignee: String,
    /// An approval's tool call (issue 47), shown as code before the
    /// options; absent for a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
}

/// One option's answer link: a `GET` shows what it would answer and a
/// Confirm button; a `POST` answers. The URL is its own capability for
/// that bundle and option, and for nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NoticeAction {
    /// The option's label.
    pub label: String,
    /// The option it answers.
    pub option_id: String,
    /// The answer link.
    pub url: String,
}

impl Notice {
    /// The readable line for this notice's other fields.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut first = escape_chat(self.questions.first().map_or("", String::as_str));
        if let Some(call) = &self.tool_call {
            // The call in one short line: the whole of it is in Clarify.
            let line = call.shown(200).replace('\n', " ");
            first = alloc::format!(
                "{} `{}` {first}",
                escape_chat(&call.tool),
                escape_chat(&line)
            );
        }
        let task = escape_chat(&self.task);
        let more = match self.questions.len() {
            0 | 1 => String::new(),
            n => alloc::format!(" (+{} more)", n - 1),
        };
        // Named, so the person it is for sees it is theirs (issue 29).
        let whom = match self.assignee.as_str() {
            "" => String::new(),
            name => alloc::format!(" (for {})", escape_chat(name)),
        };
        match (self.event, &self.answered_by) {
            (NoticeKind::Waiting, _) => alloc::format!(
                "An agent is waiting on “{task}”{whom}: {first}{more} Answer at {}",
                self.url
            ),
            (NoticeKind::Reminder, _) => alloc::format!(
                "Reminder: an agent is still waiting on “{task}”{whom}: {first}{more} It expires \
                 at {}. Answer at {}",
                self.expires_at,
                self.url
            ),
            (NoticeKind::Resolved, Some(by)) => alloc::format!(
                "Answered by {} {}: {first}{more}",
                escape_chat(&by.user),
                Channel::phrase(&by.channel)
            ),
            (event, _) => alloc::format!("{first}{more} ({})", event.as_str()),
        }
    }
}

/// `text` with `&`, `<` and `>` escaped as Slack's message formatting asks
/// (Mattermost reads the same): `<https://x|label>`, `<!channel>` and
/// `<@U123>` are then shown as typed, never as a link or a mention.
#[must_use]
pub fn escape_chat(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::{Notice, NoticeKind, escape_chat};
    use crate::provenance::{AnsweredBy, Channel};

    fn notice(event: NoticeKind) -> Notice {
        Notice {
            event,
            text: String::new(),
            pending_id: "p".into(),
            task_id: "t".into(),
            task: "Migrate".into(),
            session_id: "s".into(),
            questions: vec!["Which database?".into(), "Which port?".into()],
            url: "http://localhost:7420/t/t".into(),
            answered_by: None,
            expires_at: "2026-12-01T10:00:00Z".into(),
            actions: Vec::new(),
            assignee: String::new(),
            tool_call: None,
        }
    }

    #[test]
    fn the_wire_spellings_match_serde() {
        use NoticeKind::*;
        for kind in [Waiting, Resolved, Expired, Cancelled, Reminder] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }

    #[test]
    fn each_event_reads_as_a_line() {
        assert_eq!(
            notice(NoticeKind::Waiting).describe(),
            "An agent is waiting on “Migrate”: Which database? (+1 more) Answer at http://localhost:7420/t/t"
        );
        let mut resolved = notice(NoticeKind::Resolved);
        resolved.answered_by = Some(AnsweredBy::new("alice", Channel::Browser, ""));
        assert_eq!(
            resolved.describe(),
            "Answered by alice in the browser: Which database? (+1 more)"
        );
        assert_eq!(
            notice(NoticeKind::Reminder).describe(),
            "Reminder: an agent is still waiting on “Migrate”: Which database? (+1 more) It \
             expires at 2026-12-01T10:00:00Z. Answer at http://localhost:7420/t/t"
        );
        assert_eq!(
            notice(NoticeKind::Cancelled).describe(),
            "Which database? (+1 more) (cancelled)"
        );
    }

    #[test]
    fn the_person_it_is_for_is_named_and_escaped() {
        let mut waiting = notice(NoticeKind::Waiting);
        waiting.assignee = "bob".into();
        assert_eq!(
            waiting.describe(),
            "An agent is waiting on “Migrate” (for bob): Which database? (+1 more) Answer at \
             http://localhost:7420/t/t"
        );
        let mut reminder = notice(NoticeKind::Reminder);
        reminder.assignee = "<!channel>".into();
        assert!(
            reminder.describe().starts_with(
                "Reminder: an agent is still waiting on “Migrate” (for &lt;!channel&gt;)"
            ),
            "{}",
            reminder.describe()
        );
    }

    #[test]
    fn what_an_agent_or_a_person_wrote_cannot_become_a_link_or_a_mention() {
        assert_eq!(
            escape_chat("<https://evil.example|click here> & <!channel> <@U1>"),
            "&lt;https://evil.example|click here&gt; &amp; &lt;!channel&gt; &lt;@U1&gt;"
        );
        let mut waiting = notice(NoticeKind::Waiting);
        waiting.task = "R&D <!here>".into();
        waiting.questions = vec!["<https://evil.example|Approve?>".into()];
        let text = waiting.describe();
        assert_eq!(
            text,
            "An agent is waiting on “R&amp;D &lt;!here&gt;”: &lt;https://evil.example|Approve?&gt; \
             Answer at http://localhost:7420/t/t"
        );
        let mut resolved = notice(NoticeKind::Resolved);
        resolved.answered_by = Some(AnsweredBy::new("<!channel>", Channel::Browser, ""));
        assert!(
            resolved
                .describe()
                .starts_with("Answered by &lt;!channel&gt; ")
        );
    }
}
