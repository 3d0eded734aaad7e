//! A caller's answer to a bundle, as received (before validation).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::serde_util::null_as_default;

/// `POST /clarification/{id}/respond`'s body, and `answer_question_kandev`'s
/// arguments less `pending_id`.
///
/// Unknown keys are refused: a misspelt `answer` silently ignored would turn
/// an answer into a count-mismatch error at best and lose it at worst.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Submission {
    /// One entry per question (N6); empty on a rejection.
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub answers: Vec<AnswerInput>,
    /// Declines the whole bundle (N8a: not together with answers).
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "core::ops::Not::not"
    )]
    pub rejected: bool,
    /// Why; at most 2000 runes (N8b). MCP callers name it `reason` (N1).
    #[serde(
        alias = "reason",
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reject_reason: String,
}

/// One answer entry as received.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnswerInput {
    /// The question answered.
    #[serde(deserialize_with = "null_as_default")]
    pub question_id: String,
    /// Chosen option ids; several valid ones are allowed (N8).
    #[serde(deserialize_with = "null_as_default")]
    pub selected_options: Vec<String>,
    /// Free text, at most 2000 runes before trimming (N8b, N3a rule 3).
    #[serde(deserialize_with = "null_as_default")]
    pub custom_text: String,
}

impl Submission {
    /// A submission answering with `answers`.
    #[must_use]
    pub fn answers(answers: Vec<AnswerInput>) -> Self {
        Self {
            answers,
            ..Self::default()
        }
    }

    /// A submission declining the bundle.
    #[must_use]
    pub fn reject(reason: &str) -> Self {
        Self {
            rejected: true,
            reject_reason: String::from(reason),
            ..Self::default()
        }
    }
}
