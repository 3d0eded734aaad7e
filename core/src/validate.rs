//! Validation (N6–N8b, L16) and normalization (N3a) of a submission.
//!
//! Both run before the claim (N8c): a submission that fails here never
//! resolves a bundle and never sees the winner's payload (R2c). The result is
//! the canonical form, so equivalent submissions store byte-identical answers
//! (P1b).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::envelope::{Answer, Response};
use crate::field::FieldPath;
use crate::question::Question;
use crate::runes::{MAX_TEXT_RUNES, exceeds_text_limit, rune_count};
use crate::status::Status;
use crate::submission::Submission;

/// Why a submission was refused. Each message starts with the field it names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubmissionError {
    /// A question of the bundle has no `question_id`, so no outcome can be stored (L16).
    #[error(
        "pending_id: this clarification request has a question without a question_id and cannot be answered"
    )]
    UnanswerableBundle,
    /// `answers` does not hold exactly one entry per question (N6.1, N8a).
    #[error("answers: expected one answer per question ({expected}), got {got}")]
    AnswerCount {
        /// Questions in the bundle.
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// An entry has an empty `question_id` (N6.2).
    #[error("{field}: is required")]
    EmptyQuestionId {
        /// `answers[i].question_id`.
        field: FieldPath,
    },
    /// An entry names a question the bundle does not have (N6.3).
    #[error("{field}: unknown question {question_id:?}")]
    UnknownQuestion {
        /// `answers[i].question_id`.
        field: FieldPath,
        /// The id given.
        question_id: String,
    },
    /// An entry repeats a question an earlier entry answered (N6.4).
    #[error("{field}: question {question_id:?} is answered twice")]
    DuplicateQuestion {
        /// `answers[i].question_id`.
        field: FieldPath,
        /// The repeated id.
        question_id: String,
    },
    /// A selected option is not one of the question's options (N8).
    #[error("{field}: question {question_id:?} has no option {option_id:?}")]
    UnknownOption {
        /// `answers[i].selected_options[j]`.
        field: FieldPath,
        /// The question answered.
        question_id: String,
        /// The option id given.
        option_id: String,
    },
    /// `rejected: true` came with answers (N8a).
    #[error("answers: must be empty when rejected is true")]
    RejectedWithAnswers,
    /// A `reject_reason` came without `rejected: true`.
    #[error("reject_reason: only allowed when rejected is true")]
    ReasonWithoutRejection,
    /// A `custom_text` or `reject_reason` holds U+0000, which no database
    /// backend can store alike (PostgreSQL refuses it).
    #[error("{field}: may not contain the NUL character (U+0000)")]
    NulCharacter {
        /// `answers[i].custom_text` or `reject_reason`.
        field: FieldPath,
    },
    /// A `custom_text` or `reject_reason` is over 2000 runes (N8b).
    #[error("{field}: is {runes} characters, the limit is {MAX_TEXT_RUNES}")]
    TooLong {
        /// `answers[i].custom_text` or `reject_reason`.
        field: FieldPath,
        /// Its raw length in runes.
        runes: usize,
    },
}

impl SubmissionError {
    /// The field the error names, as a path into the request.
    #[must_use]
    pub fn field(&self) -> FieldPath {
        match self {
            Self::UnanswerableBundle => FieldPath::root("pending_id"),
            Self::AnswerCount { .. } | Self::RejectedWithAnswers => FieldPath::root("answers"),
            Self::ReasonWithoutRejection => FieldPath::root("reject_reason"),
            Self::EmptyQuestionId { field }
            | Self::UnknownQuestion { field, .. }
            | Self::DuplicateQuestion { field, .. }
            | Self::UnknownOption { field, .. }
            | Self::NulCharacter { field }
            | Self::TooLong { field, .. } => field.clone(),
        }
    }
}

/// A validated, normalized submission: what the claim writes (P1a, P1b).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// One normalized answer per question, in bundle order.
    Answered(Vec<Answer>),
    /// The bundle is declined.
    Rejected {
        /// The trimmed reason, `""` when none.
        reason: String,
    },
}

impl Outcome {
    /// The terminal status the claim writes.
    #[must_use]
    pub const fn status(&self) -> Status {
        match self {
            Self::Answered(_) => Status::Answered,
            Self::Rejected { .. } => Status::Rejected,
        }
    }

    /// The answers; empty on a rejection.
    #[must_use]
    pub fn answers(&self) -> &[Answer] {
        match self {
            Self::Answered(answers) => answers,
            Self::Rejected { .. } => &[],
        }
    }

    /// The answer for `question_id`, as the claim writes it to that
    /// question's `metadata.response` (P1a); `None` on a rejection.
    #[must_use]
    pub fn answer_for(&self, question_id: &str) -> Option<&Answer> {
        self.answers().iter().find(|a| a.question_id == question_id)
    }

    /// The response envelope for this outcome (R12).
    #[must_use]
    pub fn to_response(&self, pending_id: &str, responded_at: &str) -> Response {
        let (rejected, reject_reason) = match self {
            Self::Answered(_) => (false, String::new()),
            Self::Rejected { reason } => (true, reason.clone()),
        };
        Response {
            pending_id: String::from(pending_id),
            answers: self.answers().to_vec(),
            rejected,
            reject_reason,
            responded_at: String::from(responded_at),
        }
    }
}

/// Validates `submission` against the bundle's `questions` (in D2 order, one
/// per stored message, N6a) and returns its normalized outcome.
///
/// # Errors
/// One rule the submission breaks, naming its field. Which one is reported
/// when several are broken is unspecified (N8d).
pub fn validate_submission(
    questions: &[Question],
    submission: &Submission,
) -> Result<Outcome, SubmissionError> {
    if questions.is_empty() || questions.iter().any(|q| q.question_id.is_empty()) {
        return Err(SubmissionError::UnanswerableBundle);
    }
    check_text(&submission.reject_reason, || {
        FieldPath::root("reject_reason")
    })?;
    if submission.rejected {
        if !submission.answers.is_empty() {
            return Err(SubmissionError::RejectedWithAnswers);
        }
        return Ok(Outcome::Rejected {
            reason: String::from(submission.reject_reason.trim()),
        });
    }
    if !submission.reject_reason.is_empty() {
        return Err(SubmissionError::ReasonWithoutRejection);
    }
    if submission.answers.len() != questions.len() {
        return Err(SubmissionError::AnswerCount {
            expected: questions.len(),
            got: submission.answers.len(),
        });
    }

    // question_id → (its question, the entry answering it)
    let mut by_question: BTreeMap<&str, (&Question, usize)> = BTreeMap::new();
    for (index, entry) in submission.answers.iter().enumerate() {
        let field = || FieldPath::root("answers").at(index);
        let id = entry.question_id.as_str();
        if id.is_empty() {
            return Err(SubmissionError::EmptyQuestionId {
                field: field().dot("question_id"),
            });
        }
        let Some(question) = questions.iter().find(|q| q.question_id == id) else {
            return Err(SubmissionError::UnknownQuestion {
                field: field().dot("question_id"),
                question_id: String::from(id),
            });
        };
        if by_question.insert(id, (question, index)).is_some() {
            return Err(SubmissionError::DuplicateQuestion {
                field: field().dot("question_id"),
                question_id: String::from(id),
            });
        }
        for (option_index, option_id) in entry.selected_options.iter().enumerate() {
            if question.option_position(option_id).is_none() {
                return Err(SubmissionError::UnknownOption {
                    field: field().dot("selected_options").at(option_index),
                    question_id: String::from(id),
                    option_id: option_id.clone(),
                });
            }
        }
        check_text(&entry.custom_text, || field().dot("custom_text"))?;
    }

    let answers = questions
        .iter()
        .map(|question| {
            let (_, index) = by_question[question.question_id.as_str()];
            let entry = &submission.answers[index];
            Answer {
                question_id: question.question_id.clone(),
                selected_options: normalized_options(question, &entry.selected_options),
                custom_text: String::from(entry.custom_text.trim()),
            }
        })
        .collect();
    Ok(Outcome::Answered(answers))
}

/// N8b on the raw value, before any trimming (N3a rule 3), and no NUL.
fn check_text(text: &str, field: impl FnOnce() -> FieldPath) -> Result<(), SubmissionError> {
    if text.contains('\0') {
        return Err(SubmissionError::NulCharacter { field: field() });
    }
    if exceeds_text_limit(text) {
        return Err(SubmissionError::TooLong {
            field: field(),
            runes: rune_count(text),
        });
    }
    Ok(())
}

/// N3a rule 2: the question's own option order, exact duplicates removed.
/// Every id is known to be an option of `question`.
fn normalized_options(question: &Question, selected: &[String]) -> Vec<String> {
    question
        .options
        .iter()
        .filter(|option| selected.contains(&option.option_id))
        .map(|option| option.option_id.clone())
        .collect()
}
