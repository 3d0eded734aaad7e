//! The shapes `list_pending_questions_kandev` returns (L3, L4, L4a, L11) and
//! its paging rules (D7, L9, L10, L13).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::approval::{BundleKind, ToolCall};
use crate::question::QuestionOption;
use crate::stored::StoredMessage;

/// The page size when none (or less than 1) is asked for (L10).
pub const DEFAULT_LIMIT: u32 = 50;
/// The largest page; larger requests are clamped, not refused (L10).
pub const MAX_LIMIT: u32 = 200;

/// One question of a listed bundle. Every key is always present and never
/// `null` (L4a).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ListedQuestion {
    /// The id `answer_question_kandev` takes.
    pub question_id: String,
    /// A short heading, `""` when none.
    pub title: String,
    /// The question itself, `""` when unreadable (L15).
    pub prompt: String,
    /// Its own status; `pending` when the stored status is absent (L4a, L12).
    pub status: String,
    /// The choices, `[]` when unreadable (L15).
    pub options: Vec<QuestionOption>,
    /// Whether the agent expects several options chosen together (a hint:
    /// any question accepts several, N8).
    #[serde(default)]
    pub multi_select: bool,
    /// The option chosen if the bundle expires unanswered; `""` for none.
    #[serde(default)]
    pub default_option_id: String,
}

impl From<ListedQuestion> for crate::Question {
    /// The question to answer, as a listing shows it (its status aside).
    fn from(listed: ListedQuestion) -> Self {
        Self {
            question_id: listed.question_id,
            title: listed.title,
            prompt: listed.prompt,
            options: listed.options,
            multi_select: listed.multi_select,
            default_option_id: listed.default_option_id,
        }
    }
}

/// One active bundle as listed (L3). Every key is always present (L4a).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PendingBundle {
    /// The bundle's id.
    pub pending_id: String,
    /// The task it blocks (resolved per M5).
    pub task_id: String,
    /// The session that asked.
    pub session_id: String,
    /// The earliest `created_at` of its messages (D1), RFC 3339 UTC.
    pub created_at: String,
    /// Seconds since `created_at` by the server clock, never negative (D7).
    pub age_seconds: i64,
    /// Context shared by its questions, `""` when none.
    pub context: String,
    /// The questions in D2 order (L5).
    pub questions: Vec<ListedQuestion>,
    /// When it expires unanswered (RFC 3339 UTC); `""` for never.
    #[serde(default)]
    pub expires_at: String,
    /// Its texts as safe HTML, rendered from CommonMark by the server for
    /// the browser (REST views only; absent elsewhere), by key: `context`,
    /// `q1.title`, `q1.prompt` (blocks), `q1.prompt.line` (its first line of
    /// words as plain text, issue 46 item 1),
    /// `q1_opt1` (an option's label), `q1_opt1.description`, and an
    /// approval's `tool_call` (the call as code, issue 47). A text that
    /// is empty has no key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub html: BTreeMap<String, String>,
    /// Equal for bundles that ask the same questions with the same options
    /// (context aside), so one answer fits each ([`crate::alike`]): 32 hex
    /// digits, stable across releases.
    #[serde(default)]
    pub similar_key: String,
    /// Who it is for (a user name), `""` for nobody in particular (issue
    /// 29 item 6). Anyone who may see it may answer it.
    #[serde(default)]
    pub assignee: String,
    /// `question`, or `approval` (issue 47): whether to allow `tool_call`.
    #[serde(default)]
    pub kind: BundleKind,
    /// An approval's tool call, shown as code before its options; absent
    /// for a question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
}

impl PendingBundle {
    /// Builds the listed shape from a bundle's messages in D2 order.
    #[must_use]
    pub fn from_messages(
        identity: BundleIdentity,
        created_at: String,
        age_seconds: i64,
        messages: &[StoredMessage],
    ) -> Self {
        let context = messages
            .iter()
            .map(|m| m.metadata.context.as_str())
            .find(|c| !c.is_empty())
            .unwrap_or_default();
        let questions: Vec<ListedQuestion> = messages
            .iter()
            .map(|m| {
                let question = m.question();
                let status = String::from(m.metadata.status.listed());
                ListedQuestion {
                    question_id: question.question_id,
                    title: question.title,
                    prompt: question.prompt,
                    status,
                    options: question.options,
                    multi_select: question.multi_select,
                    default_option_id: question.default_option_id,
                }
            })
            .collect();
        let tool_call = crate::approval::bundle_tool_call(messages).cloned();
        let similar_key = crate::alike::similar_key_of(&questions, tool_call.as_ref());
        let assignee = crate::stored::bundle_assignee(messages);
        Self {
            kind: if tool_call.is_some() {
                BundleKind::Approval
            } else {
                BundleKind::Question
            },
            tool_call,
            similar_key,
            assignee: String::from(assignee),
            pending_id: identity.pending_id,
            task_id: identity.task_id,
            session_id: identity.session_id,
            created_at,
            age_seconds,
            context: String::from(context),
            questions,
            expires_at: String::new(),
            html: BTreeMap::new(),
        }
    }
}

/// Which bundle, task and session a listed bundle belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundleIdentity {
    /// The bundle's id.
    pub pending_id: String,
    /// Its task, resolved per M5.
    pub task_id: String,
    /// Its session.
    pub session_id: String,
}

/// One page of `list_pending_questions_kandev` (L11).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PendingPage {
    /// The bundles, oldest first (L6).
    pub bundles: Vec<PendingBundle>,
    /// `bundles.len()`; not a total (L11a).
    pub count: usize,
    /// The cursor for the next page; `""` when there is none (L9).
    pub next_cursor: String,
}

impl PendingPage {
    /// A page of `bundles`, continued by `next` when more exist.
    #[must_use]
    pub fn new(bundles: Vec<PendingBundle>, next: Option<&Cursor>) -> Self {
        Self {
            count: bundles.len(),
            bundles,
            next_cursor: next.map(Cursor::encode).unwrap_or_default(),
        }
    }
}

/// The seconds from `created_at_micros` to `now_micros`, floored at 0 (D7).
#[must_use]
pub fn age_seconds(now_micros: i64, created_at_micros: i64) -> i64 {
    now_micros.saturating_sub(created_at_micros).max(0) / 1_000_000
}

/// The page size for a requested `limit` (L10).
#[must_use]
pub fn clamp_limit(requested: Option<i64>) -> u32 {
    match requested {
        Some(n) if n >= 1 => u32::try_from(n).unwrap_or(MAX_LIMIT).min(MAX_LIMIT),
        _ => DEFAULT_LIMIT,
    }
}

/// A keyset position: the last `(created_at, id)` returned — a bundle's
/// `pending_id` in the pending list (L9), a message id in a transcript.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    /// The item's `created_at`, in microseconds since the Unix epoch.
    pub created_at: i64,
    /// The item's id, the tiebreak.
    pub id: String,
}

/// Why a list request was refused. Each message names the argument (L13).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The `cursor` is not one this server issued.
    #[error("cursor: not a valid cursor; pass back next_cursor exactly as returned")]
    InvalidCursor,
    /// The `created_since` is not an RFC 3339 timestamp.
    #[error("created_since: not an RFC 3339 timestamp (e.g. 2026-01-31T09:00:00Z)")]
    InvalidCreatedSince,
}

const CURSOR_VERSION: &str = "v1";

impl Cursor {
    /// The opaque text handed to callers.
    #[must_use]
    pub fn encode(&self) -> String {
        let plain = alloc::format!("{CURSOR_VERSION}:{}:{}", self.created_at, self.id);
        URL_SAFE_NO_PAD.encode(plain)
    }

    /// Reads a cursor back, refusing anything this server did not issue.
    ///
    /// # Errors
    /// [`ListError::InvalidCursor`] for text that is not a cursor.
    pub fn decode(text: &str) -> Result<Self, ListError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| ListError::InvalidCursor)?;
        let plain = String::from_utf8(bytes).map_err(|_| ListError::InvalidCursor)?;
        let mut parts = plain.splitn(3, ':');
        let (Some(CURSOR_VERSION), Some(created_at), Some(pending_id)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(ListError::InvalidCursor);
        };
        let created_at = created_at.parse().map_err(|_| ListError::InvalidCursor)?;
        if pending_id.is_empty() {
            return Err(ListError::InvalidCursor);
        }
        Ok(Self {
            created_at,
            id: String::from(pending_id),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn age_is_floored_at_zero() {
        assert_eq!(age_seconds(10_000_000, 20_000_000), 0);
        assert_eq!(age_seconds(5_999_999, 0), 5);
        assert_eq!(age_seconds(i64::MAX, i64::MIN), i64::MAX / 1_000_000);
    }

    #[test]
    fn limit_defaults_and_clamps() {
        assert_eq!(clamp_limit(None), 50);
        assert_eq!(clamp_limit(Some(0)), 50);
        assert_eq!(clamp_limit(Some(-3)), 50);
        assert_eq!(clamp_limit(Some(1)), 1);
        assert_eq!(clamp_limit(Some(200)), 200);
        assert_eq!(clamp_limit(Some(201)), 200);
        assert_eq!(clamp_limit(Some(i64::MAX)), 200);
    }

    #[test]
    fn cursor_round_trips_and_refuses_forgeries() {
        let cursor = Cursor {
            created_at: 1_700_000_000_123_456,
            id: "a:b".to_string(),
        };
        assert_eq!(Cursor::decode(&cursor.encode()), Ok(cursor));
        for bad in ["", "!!", "djE6eDp5", "djI6MTp4", "djE6MTo"] {
            assert_eq!(Cursor::decode(bad), Err(ListError::InvalidCursor), "{bad}");
        }
    }
}
