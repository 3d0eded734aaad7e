//! The durable shape of a bundle: one `clarification_request` message per
//! question, and what can be read back from those rows (D2, N6a, R2b).
//!
//! Reading is lenient on purpose. Rows written by older or buggy code must
//! still list and resolve (L15), so a missing or malformed key reads as its
//! empty value instead of failing the whole bundle.

use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::approval::ToolCall;
use crate::envelope::{Answer, Response};
use crate::metadata_key as key;
use crate::provenance::AnsweredBy;
use crate::question::Question;
use crate::status::{BundleStatus, Status};

/// `task_session_messages.metadata` of a `clarification_request` message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClarificationMetadata {
    /// The bundle this question belongs to.
    pub pending_id: String,
    /// The question's id; authoritative over `question.question_id`.
    pub question_id: String,
    /// The question as asked.
    pub question: Question,
    /// Position in the bundle; 0 when missing or unparseable (D2).
    pub question_index: i64,
    /// Number of questions in the bundle.
    pub question_total: i64,
    /// Context shared by the bundle's questions.
    pub context: String,
    /// Stored status: absent, known, or kept as read (D3).
    pub status: BundleStatus,
    /// The answer written by the claim, on `answered` only.
    pub response: Option<Answer>,
    /// The agent stopped waiting; the bundle stays answerable.
    pub agent_disconnected: bool,
    /// Claimed, delivery not yet confirmed (R6 reconciliation).
    pub response_delivery_pending: bool,
    /// A resume dispatch was started for this claim: after a crash it may
    /// have reached the agent, so it must not be rolled back and resent.
    pub resume_attempted: bool,
    /// Accepted with nobody to hand it to (no agent attached, no resume
    /// target): kept for the agent to collect on its next wait, identical
    /// ask, or read. Never rolled back by reconciliation (R6): the answer
    /// was accepted.
    pub awaiting_pickup: bool,
    /// Who resolved it and how, written by the claim (and cleared with it
    /// when a claim is taken back).
    pub answered_by: Option<AnsweredBy>,
    /// When it expires unanswered (microseconds since the Unix epoch); 0
    /// for never.
    pub expires_at: i64,
    /// Who it is for (a user name), `""` for nobody in particular.
    pub assignee: String,
    /// An approval's tool call (issue 47); `None` for a question.
    pub tool_call: Option<ToolCall>,
    /// Keys this version does not know, kept so that rewriting a row never
    /// drops what a newer version stored.
    pub extra: Map<String, Value>,
}

impl ClarificationMetadata {
    /// Reads metadata, treating anything missing or malformed as empty.
    #[must_use]
    pub fn from_json(value: &Value) -> Self {
        let empty = Map::new();
        let object = value.as_object().unwrap_or(&empty);
        let text = |name: &str| {
            object
                .get(name)
                .and_then(Value::as_str)
                .map(String::from)
                .unwrap_or_default()
        };
        let int = |name: &str| object.get(name).and_then(Value::as_i64).unwrap_or(0);
        let flag = |name: &str| object.get(name).and_then(Value::as_bool).unwrap_or(false);
        Self {
            pending_id: text(key::PENDING_ID),
            question_id: text(key::QUESTION_ID),
            question: object
                .get(key::QUESTION)
                .and_then(|v| Question::deserialize(v).ok())
                .unwrap_or_default(),
            question_index: int(key::QUESTION_INDEX),
            question_total: int(key::QUESTION_TOTAL),
            context: text(key::CONTEXT),
            status: BundleStatus::read(object.get(key::STATUS).and_then(Value::as_str)),
            response: object
                .get(key::RESPONSE)
                .and_then(|v| Answer::deserialize(v).ok()),
            agent_disconnected: flag(key::AGENT_DISCONNECTED),
            response_delivery_pending: flag(key::RESPONSE_DELIVERY_PENDING),
            resume_attempted: flag(key::RESUME_ATTEMPTED),
            awaiting_pickup: flag(key::AWAITING_PICKUP),
            answered_by: object
                .get(key::ANSWERED_BY)
                .and_then(|v| AnsweredBy::deserialize(v).ok()),
            expires_at: int(key::EXPIRES_AT),
            assignee: text(key::ASSIGNEE),
            tool_call: object
                .get(key::TOOL_CALL)
                .and_then(|v| ToolCall::deserialize(v).ok()),
            extra: object
                .iter()
                .filter(|(name, _)| !key::ALL.contains(&name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
        }
    }

    /// The metadata as stored; optional keys are written only when set, as
    /// the claim and detach write them.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let mut object = self.extra.clone();
        let mut put = |name: &str, value: Value| {
            object.insert(String::from(name), value);
        };
        put(key::PENDING_ID, Value::from(self.pending_id.as_str()));
        put(key::QUESTION_ID, Value::from(self.question_id.as_str()));
        put(
            key::QUESTION,
            serde_json::to_value(&self.question).unwrap_or(Value::Null),
        );
        put(key::QUESTION_INDEX, Value::from(self.question_index));
        put(key::QUESTION_TOTAL, Value::from(self.question_total));
        put(key::CONTEXT, Value::from(self.context.as_str()));
        if self.status != BundleStatus::Absent {
            put(key::STATUS, Value::from(self.status.as_str()));
        }
        if let Some(response) = &self.response {
            put(
                key::RESPONSE,
                serde_json::to_value(response).unwrap_or(Value::Null),
            );
        }
        if self.agent_disconnected {
            put(key::AGENT_DISCONNECTED, Value::Bool(true));
        }
        if self.response_delivery_pending {
            put(key::RESPONSE_DELIVERY_PENDING, Value::Bool(true));
        }
        if self.resume_attempted {
            put(key::RESUME_ATTEMPTED, Value::Bool(true));
        }
        if self.awaiting_pickup {
            put(key::AWAITING_PICKUP, Value::Bool(true));
        }
        if self.expires_at > 0 {
            put(key::EXPIRES_AT, Value::from(self.expires_at));
        }
        if !self.assignee.is_empty() {
            put(key::ASSIGNEE, Value::from(self.assignee.as_str()));
        }
        if let Some(call) = &self.tool_call {
            put(
                key::TOOL_CALL,
                serde_json::to_value(call).unwrap_or(Value::Null),
            );
        }
        if let Some(by) = &self.answered_by {
            put(
                key::ANSWERED_BY,
                serde_json::to_value(by).unwrap_or(Value::Null),
            );
        }
        Value::Object(object)
    }

    /// Whether this message counts as pending for the active rule (D3).
    #[must_use]
    pub fn is_pending(&self) -> bool {
        self.status.counts_as_pending()
    }
}

/// One stored `clarification_request` message of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// The message's primary key.
    pub id: String,
    /// When it was written, in microseconds since the Unix epoch.
    pub created_at: i64,
    /// Its parsed metadata.
    pub metadata: ClarificationMetadata,
}

impl StoredMessage {
    /// The question with the flat `question_id` as its id, which is what
    /// listing, validation and the claim all go by (L16).
    #[must_use]
    pub fn question(&self) -> Question {
        Question {
            question_id: self.metadata.question_id.clone(),
            ..self.metadata.question.clone()
        }
    }
}

/// Sorts a bundle's messages into D2 order: `question_index`, then
/// `created_at`, then message id — a total order even for a corrupt bundle
/// whose questions all claim index 0.
pub fn sort_d2(messages: &mut [StoredMessage]) {
    messages.sort_by(|a, b| {
        (a.metadata.question_index, a.created_at, &a.id).cmp(&(
            b.metadata.question_index,
            b.created_at,
            &b.id,
        ))
    });
}

/// The bundle's questions in the given (D2) order: one expected answer per
/// message (N6a).
#[must_use]
pub fn bundle_questions(messages: &[StoredMessage]) -> Vec<Question> {
    messages.iter().map(StoredMessage::question).collect()
}

/// Whom the bundle is for (issue 29 item 6): the assignee its messages
/// carry, `""` for nobody in particular.
#[must_use]
pub fn bundle_assignee(messages: &[StoredMessage]) -> &str {
    messages
        .iter()
        .map(|m| m.metadata.assignee.as_str())
        .find(|a| !a.is_empty())
        .unwrap_or_default()
}

/// A winner reconstructed from stored rows (R2b).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Winner {
    /// `answered` or `rejected`.
    pub status: Status,
    /// The stored answers, in D2 order; `[]` on a rejection.
    pub answers: Vec<Answer>,
}

impl Winner {
    /// The envelope a losing caller is told (R2b: `reject_reason` is always
    /// `""`, since no reason is stored).
    #[must_use]
    pub fn to_response(&self, pending_id: &str, responded_at: &str) -> Response {
        Response {
            pending_id: String::from(pending_id),
            answers: self.answers.clone(),
            rejected: self.status == Status::Rejected,
            reject_reason: String::new(),
            responded_at: String::from(responded_at),
        }
    }
}

/// Reconstructs the winner of a bundle whose messages are in D2 order, or
/// `None` when no message carries `answered` or `rejected` (R2's no-winner
/// branch).
#[must_use]
pub fn winner(messages: &[StoredMessage]) -> Option<Winner> {
    let status = messages
        .iter()
        .find_map(|m| m.metadata.status.known().filter(|s| s.is_resolution()))?;
    let answers = messages
        .iter()
        .filter_map(|m| m.metadata.response.clone())
        .collect();
    Some(Winner { status, answers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::json;

    fn message(id: &str, index: i64, created_at: i64, question_id: &str) -> StoredMessage {
        StoredMessage {
            id: id.to_string(),
            created_at,
            metadata: ClarificationMetadata {
                pending_id: "p1".to_string(),
                question_id: question_id.to_string(),
                question_index: index,
                ..ClarificationMetadata::default()
            },
        }
    }

    #[test]
    fn d2_orders_by_index_then_created_at_then_id() {
        let mut messages = vec![
            message("m3", 1, 10, "b"),
            message("m2", 0, 20, "c"),
            message("m1", 0, 20, "d"),
            message("m0", 0, 5, "a"),
        ];
        sort_d2(&mut messages);
        let order: Vec<&str> = messages
            .iter()
            .map(|m| m.metadata.question_id.as_str())
            .collect();
        assert_eq!(order, ["a", "d", "c", "b"]);
    }

    #[test]
    fn metadata_reads_malformed_keys_as_empty() {
        let meta = ClarificationMetadata::from_json(&json!({
            "pending_id": "p", "question_id": 7, "question": "not an object",
            "question_index": "x", "status": null, "response": [1, 2],
        }));
        assert_eq!(meta.pending_id, "p");
        assert_eq!(meta.question_id, "");
        assert_eq!(meta.question, Question::default());
        assert_eq!(meta.question_index, 0);
        assert!(meta.is_pending());
        assert_eq!(meta.response, None);
        assert_eq!(
            ClarificationMetadata::from_json(&json!(null)),
            ClarificationMetadata::default()
        );
    }

    #[test]
    fn metadata_round_trips() {
        let meta = ClarificationMetadata {
            pending_id: "p".to_string(),
            question_id: "q1".to_string(),
            question_index: 2,
            question_total: 3,
            context: "ctx".to_string(),
            status: Status::Answered.into(),
            response: Some(Answer {
                question_id: "q1".to_string(),
                selected_options: vec!["q1_opt1".to_string()],
                custom_text: String::new(),
            }),
            agent_disconnected: true,
            response_delivery_pending: true,
            resume_attempted: true,
            awaiting_pickup: true,
            answered_by: Some(AnsweredBy::default()),
            expires_at: 9,
            assignee: "bob".to_string(),
            tool_call: Some(crate::approval::ToolCall {
                tool: "Bash".to_string(),
                call: "ls".to_string(),
            }),
            ..ClarificationMetadata::default()
        };
        assert_eq!(ClarificationMetadata::from_json(&meta.to_json()), meta);
        // Every field set writes exactly the keys the SQL builders name.
        let written = meta.to_json();
        let mut keys: Vec<&str> = written
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut all = crate::metadata_key::ALL.to_vec();
        keys.sort_unstable();
        all.sort_unstable();
        assert_eq!(keys, all);
    }

    #[test]
    fn unknown_keys_survive_a_rewrite() {
        let stored = json!({"pending_id": "p", "question_id": "q1", "future_key": {"a": 1}});
        let mut meta = ClarificationMetadata::from_json(&stored);
        meta.status = Status::Answered.into();
        let rewritten = meta.to_json();
        assert_eq!(rewritten["future_key"], json!({"a": 1}));
        assert_eq!(rewritten["status"], "answered");
    }

    #[test]
    fn flat_question_id_wins_over_the_nested_one() {
        let mut m = message("m", 0, 0, "flat");
        m.metadata.question.question_id = "nested".to_string();
        assert_eq!(m.question().question_id, "flat");
    }

    #[test]
    fn no_winner_without_a_resolution_status() {
        let mut a = message("a", 0, 0, "q1");
        a.metadata.status = Status::Expired.into();
        let b = message("b", 1, 0, "q2");
        assert_eq!(winner(&[a, b]), None);
    }
}
