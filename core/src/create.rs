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

use crate::approval::{BundleKind, ToolCall, check_tool_call};
use crate::field::FieldPath;
use crate::question::{Question, QuestionOption};
use crate::runes::rune_count;
use crate::serde_util::null_as_default;

mod error;
pub use error::CreateError;

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
/// The longest `assignee`, in runes: a user name.
pub const MAX_ASSIGNEE_RUNES: usize = 64;

/// A bundle as an agent submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct NewBundle {
    /// The questions, 1–4.
    #[cfg_attr(
        feature = "openapi",
        schema(min_items = 1, max_items = 4, required = true)
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub questions: Vec<NewQuestion>,
    /// Context shown once above the questions.
    #[cfg_attr(feature = "openapi", schema(max_length = 20000, nullable))]
    #[serde(deserialize_with = "null_as_default")]
    pub context: String,
    /// The same context as paragraphs; joined with blank lines.
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(deserialize_with = "null_as_default")]
    pub context_paragraphs: Vec<String>,
    /// The person this is for (a user name; issue 29 item 6): first in
    /// their inbox under "For you", named in the notices. Anyone who may
    /// see the bundle may still answer it.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 64,
            nullable,
            pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
        )
    )]
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub assignee: String,
    /// `question` (the default) or `approval` (issue 47): whether to allow
    /// the tool call in `tool_call`, shown as code before the options.
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "BundleKind::is_question"
    )]
    pub kind: BundleKind,
    /// An approval's tool call; absent for a question.
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
}

/// A question as an agent submits it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct NewQuestion {
    /// An identifier of the agent's choosing; assigned when empty.
    #[cfg_attr(feature = "openapi", schema(pattern = r"^\S{0,64}$", nullable))]
    #[serde(alias = "question_id", deserialize_with = "null_as_default")]
    pub id: String,
    /// A short heading.
    #[cfg_attr(feature = "openapi", schema(max_length = 200, nullable))]
    #[serde(deserialize_with = "null_as_default")]
    pub title: String,
    /// The question itself; required.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 10000,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]",
            required = true
        )
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub prompt: String,
    /// The choices, 2–6.
    #[cfg_attr(
        feature = "openapi",
        schema(min_items = 2, max_items = 6, required = true)
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub options: Vec<NewOption>,
    /// Several options may be chosen together (a hint to answerers; any
    /// question accepts several, N8).
    #[cfg_attr(feature = "openapi", schema(nullable))]
    #[serde(
        deserialize_with = "null_as_default",
        skip_serializing_if = "core::ops::Not::not"
    )]
    pub multi_select: bool,
    /// The option chosen for the agent if the question expires unanswered
    /// (its id: the agent's own, or the assigned `q1_opt2`); only when every
    /// question of the bundle has one.
    #[cfg_attr(feature = "openapi", schema(nullable))]
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
    #[cfg_attr(feature = "openapi", schema(pattern = r"^\S{0,64}$", nullable))]
    #[serde(alias = "option_id", deserialize_with = "null_as_default")]
    pub id: String,
    /// What the option says; required.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 500,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]",
            required = true
        )
    )]
    #[serde(deserialize_with = "null_as_default")]
    pub label: String,
    /// A longer explanation.
    #[cfg_attr(feature = "openapi", schema(max_length = 2000, nullable))]
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
    /// Who it is for, trimmed; `""` for nobody in particular.
    pub assignee: String,
    /// An approval's tool call; `None` for questions.
    pub tool_call: Option<ToolCall>,
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
    let assignee = check_assignee(&bundle.assignee)?;
    let tool_call = check_tool_call(bundle.kind, bundle.tool_call.as_ref())?;
    Ok(BundleSpec {
        questions,
        context,
        assignee,
        tool_call,
    })
}

/// An assignee as given: a user name or nothing, trimmed. Judged as sent,
/// before the trim, as the contract's `maxLength` and pattern state it: a
/// tab or a newline is a control character wherever it stands.
///
/// # Errors
/// [`CreateError::InvalidAssignee`]: too long, or holding a control
/// character.
pub fn check_assignee(name: &str) -> Result<String, CreateError> {
    if name.chars().count() > MAX_ASSIGNEE_RUNES || name.chars().any(char::is_control) {
        return Err(CreateError::InvalidAssignee {
            name: String::from(name.trim()),
        });
    }
    Ok(String::from(name.trim()))
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

/// `text` holds no NUL and at most `max` runes (N8b: counted as people
/// count characters), else the error naming `field`.
pub(crate) fn check_len(text: &str, field: FieldPath, max: usize) -> Result<(), CreateError> {
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
