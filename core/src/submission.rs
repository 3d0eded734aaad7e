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
#[serde(try_from = "Received")]
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
    /// Why; at most 2000 runes (N8b). It may be sent as `reason` too (N1).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reject_reason: String,
}

/// A submission as it arrives, with the reason under either of its names.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Submission))]
#[serde(default, deny_unknown_fields, rename = "Submission")]
struct Received {
    /// One entry per question (N6); empty on a rejection. `null` reads
    /// as absent, here and in every field of a submission.
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(deserialize_with = "null_as_default")]
    answers: Vec<AnswerInput>,
    /// Declines the whole bundle (N8a: not together with answers).
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(deserialize_with = "null_as_default")]
    rejected: bool,
    /// Why; at most 2000 characters (N8b).
    #[cfg_attr(feature = "openapi", schema(nullable, max_length = 2000))]
    #[serde(deserialize_with = "null_as_default")]
    reject_reason: String,
    /// The same as `reject_reason` (N1); give one or the other (both only
    /// when they are the same text).
    #[cfg_attr(feature = "openapi", schema(nullable, max_length = 2000))]
    #[serde(deserialize_with = "null_as_default")]
    reason: String,
}

/// The schema of what is accepted: [`Received`]'s, under this name.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Submission {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        <Received as utoipa::PartialSchema>::schema()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Submission {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        <Received as utoipa::ToSchema>::schemas(schemas);
    }
}

impl TryFrom<Received> for Submission {
    type Error = ConflictingReasons;

    fn try_from(received: Received) -> Result<Self, Self::Error> {
        Self::from_parts(
            received.answers,
            received.rejected,
            &received.reason,
            &received.reject_reason,
        )
    }
}

/// `reason` and `reject_reason` both given, and different.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("reason: give reason or reject_reason, not two different ones")]
pub struct ConflictingReasons;

/// One answer entry as received.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct AnswerInput {
    /// The question answered.
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(deserialize_with = "null_as_default")]
    pub question_id: String,
    /// Chosen option ids; several valid ones are allowed (N8).
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(deserialize_with = "null_as_default")]
    pub selected_options: Vec<String>,
    /// Free text, at most 2000 runes before trimming (N8b, N3a rule 3).
    #[cfg_attr(feature = "openapi", schema(nullable, max_length = 2000))]
    #[serde(deserialize_with = "null_as_default")]
    pub custom_text: String,
}

impl Submission {
    /// A submission from its parts, the reason given as `reason` or
    /// `reject_reason` (the same field under its MCP and REST names, N1):
    /// the one constructor REST bodies and MCP arguments both go through.
    ///
    /// # Errors
    /// [`ConflictingReasons`] when both names carry different texts.
    pub fn from_parts(
        answers: Vec<AnswerInput>,
        rejected: bool,
        reason: &str,
        reject_reason: &str,
    ) -> Result<Self, ConflictingReasons> {
        let reject_reason = match (reason, reject_reason) {
            (a, b) if !a.is_empty() && !b.is_empty() && a != b => return Err(ConflictingReasons),
            ("", b) => b,
            (a, _) => a,
        };
        Ok(Self {
            answers,
            rejected,
            reject_reason: String::from(reject_reason),
        })
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_names_of_the_reason_read_alike_and_may_not_disagree() {
        let read = |json: &str| serde_json::from_str::<Submission>(json);
        let by_rest = read(r#"{"rejected": true, "reject_reason": "later"}"#).unwrap();
        let by_mcp = read(r#"{"rejected": true, "reason": "later"}"#).unwrap();
        assert_eq!(by_rest, by_mcp);
        assert_eq!(by_rest.reject_reason, "later");
        let both = read(r#"{"rejected": true, "reason": "later", "reject_reason": "later"}"#);
        assert_eq!(both.unwrap(), by_rest);
        let error = read(r#"{"rejected": true, "reason": "a", "reject_reason": "b"}"#).unwrap_err();
        assert!(error.to_string().starts_with("reason:"), "{error}");
        assert!(
            read(r#"{"answer": []}"#).is_err(),
            "unknown keys are refused"
        );
    }
}
