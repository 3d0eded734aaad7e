//! Validation of a new bundle as an agent asks it (`ask_user_question_kandev`).
//!
//! A bundle holds 1–4 questions, each with a prompt and 2–6 labelled options.
//! Identifiers the agent leaves out are assigned (`q1…`, `q1_opt1…`) so that
//! every stored question and option can be named by an answer (L16).

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::field::FieldPath;
use crate::question::{Question, QuestionOption};
use crate::runes::rune_count;
use crate::serde_util::null_as_default;

/// The fewest questions a bundle may hold.
pub const MIN_QUESTIONS: usize = 1;
/// The most questions a bundle may hold.
pub const MAX_QUESTIONS: usize = 4;
/// The fewest options a question may offer.
pub const MIN_OPTIONS: usize = 2;
/// The most options a question may offer.
pub const MAX_OPTIONS: usize = 6;
/// The longest identifier an agent may choose, in runes.
pub const MAX_ID_RUNES: usize = 64;
/// The longest title, in runes.
pub const MAX_TITLE_RUNES: usize = 200;
/// The longest prompt, in runes.
pub const MAX_PROMPT_RUNES: usize = 10_000;
/// The longest option label, in runes.
pub const MAX_LABEL_RUNES: usize = 500;
/// The longest option description, in runes.
pub const MAX_DESCRIPTION_RUNES: usize = 2_000;
/// The longest shared context, in runes.
pub const MAX_CONTEXT_RUNES: usize = 20_000;

/// A bundle as an agent submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct NewBundle {
    /// The questions, 1–4.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 4))]
    #[serde(deserialize_with = "null_as_default")]
    pub questions: Vec<NewQuestion>,
    /// Context shown once above the questions.
    #[cfg_attr(feature = "openapi", schema(max_length = 20000))]
    #[serde(deserialize_with = "null_as_default")]
    pub context: String,
    /// The same context as paragraphs; joined with blank lines.
    #[serde(deserialize_with = "null_as_default")]
    pub context_paragraphs: Vec<String>,
}

/// A question as an agent submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct NewQuestion {
    /// An identifier of the agent's choosing; assigned when empty.
    #[cfg_attr(feature = "openapi", schema(pattern = r"^\S{0,64}$"))]
    #[serde(alias = "question_id", deserialize_with = "null_as_default")]
    pub id: String,
    /// A short heading.
    #[cfg_attr(feature = "openapi", schema(max_length = 200))]
    #[serde(deserialize_with = "null_as_default")]
    pub title: String,
    /// The question itself; required.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 10000, pattern = r"\S")
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub prompt: String,
    /// The choices, 2–6.
    #[cfg_attr(feature = "openapi", schema(min_items = 2, max_items = 6))]
    #[serde(deserialize_with = "null_as_default")]
    pub options: Vec<NewOption>,
    /// Several options may be chosen together (a hint to answerers; any
    /// question accepts several, N8).
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "core::ops::Not::not"
    )]
    pub multi_select: bool,
    /// The option chosen for the agent if the question expires unanswered
    /// (its id: the agent's own, or the assigned `q1_opt2`); only when every
    /// question of the bundle has one.
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub default_option_id: String,
}

/// An option as an agent submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct NewOption {
    /// An identifier of the agent's choosing; assigned when empty.
    #[cfg_attr(feature = "openapi", schema(pattern = r"^\S{0,64}$"))]
    #[serde(alias = "option_id", deserialize_with = "null_as_default")]
    pub id: String,
    /// What the option says; required.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 500, pattern = r"\S")
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub label: String,
    /// A longer explanation.
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    #[serde(deserialize_with = "null_as_default")]
    pub description: String,
}

/// A validated bundle, ready to store: every id assigned, text trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleSpec {
    /// The questions in the order asked; `question_index` is the position.
    pub questions: Vec<Question>,
    /// Shared context, `""` when none.
    pub context: String,
}

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
        }
    }
}

/// Validates a new bundle and assigns the identifiers the agent left out.
///
/// # Errors
/// The first rule the bundle breaks, naming its field.
pub fn validate_new_bundle(bundle: &NewBundle) -> Result<BundleSpec, CreateError> {
    let count = bundle.questions.len();
    if !(MIN_QUESTIONS..=MAX_QUESTIONS).contains(&count) {
        return Err(CreateError::QuestionCount { got: count });
    }
    let context = shared_context(bundle)?;

    let explicit_ids = explicit_ids(
        bundle.questions.iter().map(|q| q.id.as_str()),
        &FieldPath::root("questions"),
    )?;
    let mut ids = IdAllocator::new(explicit_ids);
    let mut questions = Vec::with_capacity(count);
    for (index, new) in bundle.questions.iter().enumerate() {
        let field = FieldPath::root("questions").at(index);
        let question_id = ids.take_or_assign(new.id.trim(), |n| format!("q{n}"), index + 1);
        questions.push(validate_question(new, question_id, &field)?);
    }
    Ok(BundleSpec { questions, context })
}

fn shared_context(bundle: &NewBundle) -> Result<String, CreateError> {
    let paragraphs: Vec<&str> = bundle
        .context_paragraphs
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    let context = match (bundle.context.trim(), paragraphs.is_empty()) {
        (single, true) => String::from(single),
        ("", false) => paragraphs.join("\n\n"),
        (_, false) => return Err(CreateError::TwoContexts),
    };
    check_len(&context, FieldPath::root("context"), MAX_CONTEXT_RUNES)?;
    Ok(context)
}

fn validate_question(
    new: &NewQuestion,
    question_id: String,
    field: &FieldPath,
) -> Result<Question, CreateError> {
    let title = new.title.trim();
    check_len(title, field.clone().dot("title"), MAX_TITLE_RUNES)?;
    let prompt = required(&new.prompt, field.clone().dot("prompt"), MAX_PROMPT_RUNES)?;

    let options_field = field.clone().dot("options");
    let count = new.options.len();
    if !(MIN_OPTIONS..=MAX_OPTIONS).contains(&count) {
        return Err(CreateError::OptionCount {
            field: options_field,
            got: count,
        });
    }
    let explicit = explicit_ids(new.options.iter().map(|o| o.id.as_str()), &options_field)?;
    let mut ids = IdAllocator::new(explicit);
    let mut options = Vec::with_capacity(count);
    for (index, option) in new.options.iter().enumerate() {
        let field = options_field.clone().at(index);
        let option_id = ids.take_or_assign(
            option.id.trim(),
            |n| format!("{question_id}_opt{n}"),
            index + 1,
        );
        let label = required(&option.label, field.clone().dot("label"), MAX_LABEL_RUNES)?;
        let description = option.description.trim();
        check_len(description, field.dot("description"), MAX_DESCRIPTION_RUNES)?;
        options.push(QuestionOption {
            option_id,
            label,
            description: String::from(description),
        });
    }
    let default_option_id = new.default_option_id.trim();
    if !default_option_id.is_empty() && !options.iter().any(|o| o.option_id == default_option_id) {
        return Err(CreateError::UnknownDefault {
            field: field.clone().dot("default_option_id"),
            id: String::from(default_option_id),
        });
    }
    Ok(Question {
        question_id,
        title: String::from(title),
        prompt,
        options,
        multi_select: new.multi_select,
        default_option_id: String::from(default_option_id),
    })
}

fn required(text: &str, field: FieldPath, max: usize) -> Result<String, CreateError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(CreateError::Required { field });
    }
    check_len(trimmed, field, max)?;
    Ok(String::from(trimmed))
}

fn check_len(text: &str, field: FieldPath, max: usize) -> Result<(), CreateError> {
    if text.contains('\0') {
        return Err(CreateError::NulCharacter { field });
    }
    let runes = rune_count(text);
    if runes > max {
        return Err(CreateError::TooLong { field, runes, max });
    }
    Ok(())
}

/// Checks the ids the agent chose: well formed and unique among siblings.
fn explicit_ids<'a>(
    ids: impl Iterator<Item = &'a str>,
    parent: &FieldPath,
) -> Result<BTreeSet<String>, CreateError> {
    let mut seen = BTreeSet::new();
    for (index, raw) in ids.enumerate() {
        let id = raw.trim();
        if id.is_empty() {
            continue;
        }
        let field = parent.clone().at(index).dot("id");
        let well_formed = rune_count(id) <= MAX_ID_RUNES
            && !id.chars().any(|c| c.is_whitespace() || c.is_control());
        if !well_formed {
            return Err(CreateError::InvalidId {
                field,
                id: String::from(id),
            });
        }
        if !seen.insert(String::from(id)) {
            return Err(CreateError::DuplicateId {
                field,
                id: String::from(id),
            });
        }
    }
    Ok(seen)
}

/// Hands out generated ids that never collide with the agent's own.
struct IdAllocator {
    taken: BTreeSet<String>,
}

impl IdAllocator {
    fn new(explicit: BTreeSet<String>) -> Self {
        Self { taken: explicit }
    }

    /// Keeps an explicit id, or generates `make(n)` for the first free
    /// `n >= preferred` so that positions and ids line up when they can.
    fn take_or_assign(
        &mut self,
        explicit: &str,
        make: impl Fn(usize) -> String,
        preferred: usize,
    ) -> String {
        if !explicit.is_empty() {
            return String::from(explicit);
        }
        let mut n = preferred;
        loop {
            let candidate = make(n);
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests;
