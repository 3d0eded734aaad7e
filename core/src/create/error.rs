//! Why a new bundle was refused: one error per creation rule, each naming
//! its field.

use alloc::string::String;

use super::{
    MAX_ASSIGNEE_RUNES, MAX_ID_RUNES, MAX_OPTIONS, MAX_QUESTIONS, MIN_OPTIONS, MIN_QUESTIONS,
};
use crate::field::FieldPath;

/// Why a new bundle was refused. Each message starts with the field it names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CreateError {
    /// The bundle has fewer than 1 or more than 4 questions.
    #[error("questions: a bundle has {MIN_QUESTIONS} to {MAX_QUESTIONS} questions, got {got}")]
    QuestionCount {
        /// How many were given.
        got: usize,
    },
    /// A question offers fewer than 2 or more than 6 options.
    #[error("{field}: a question has {MIN_OPTIONS} to {MAX_OPTIONS} options, got {got}")]
    OptionCount {
        /// `questions[i].options`.
        field: FieldPath,
        /// How many were given.
        got: usize,
    },
    /// A required text (prompt, label) is empty or only whitespace.
    #[error("{field}: is required")]
    Required {
        /// The empty field.
        field: FieldPath,
    },
    /// A text holds U+0000, which no database backend can store alike.
    #[error("{field}: may not contain the NUL character (U+0000)")]
    NulCharacter {
        /// The field.
        field: FieldPath,
    },
    /// A text is longer than its limit.
    #[error("{field}: is {runes} characters, the limit is {max}")]
    TooLong {
        /// The long field.
        field: FieldPath,
        /// Its length in runes.
        runes: usize,
        /// The limit in runes.
        max: usize,
    },
    /// An identifier is too long or contains whitespace or control characters.
    #[error("{field}: {id:?} is not a valid id (1 to {MAX_ID_RUNES} characters, no spaces)")]
    InvalidId {
        /// The id field.
        field: FieldPath,
        /// The id given.
        id: String,
    },
    /// Two questions, or two options of one question, share an id.
    #[error("{field}: duplicate id {id:?}")]
    DuplicateId {
        /// The second use of the id.
        field: FieldPath,
        /// The repeated id.
        id: String,
    },
    /// Both `context` and `context_paragraphs` were given.
    #[error("context: give either context or context_paragraphs, not both")]
    TwoContexts,
    /// `assignee` is not a user name.
    #[error(
        "assignee: {name:?} is not a user name (at most {MAX_ASSIGNEE_RUNES} characters, no \
         control characters; empty for nobody in particular)"
    )]
    InvalidAssignee {
        /// The name given.
        name: String,
    },
    /// `kind` is `approval` but no `tool_call` says what to allow.
    #[error("tool_call: an approval (kind \"approval\") names the tool call it asks about")]
    ApprovalWithoutCall,
    /// A question (the default kind) carries a `tool_call`.
    #[error("tool_call: only an approval (kind \"approval\") carries a tool call")]
    CallOnQuestion,
    /// A default names no option of its question.
    #[error("{field}: {id:?} is not one of the question's option ids")]
    UnknownDefault {
        /// `questions[i].default_option_id`.
        field: FieldPath,
        /// The id given.
        id: String,
    },
}

impl CreateError {
    /// The field the error names, as a path into the request.
    #[must_use]
    pub fn field(&self) -> FieldPath {
        match self {
            Self::QuestionCount { .. } => FieldPath::root("questions"),
            Self::OptionCount { field, .. }
            | Self::Required { field }
            | Self::NulCharacter { field }
            | Self::TooLong { field, .. }
            | Self::InvalidId { field, .. }
            | Self::DuplicateId { field, .. }
            | Self::UnknownDefault { field, .. } => field.clone(),
            Self::TwoContexts => FieldPath::root("context"),
            Self::InvalidAssignee { .. } => FieldPath::root("assignee"),
            Self::ApprovalWithoutCall | Self::CallOnQuestion => FieldPath::root("tool_call"),
        }
    }
}
