//! A question as stored in a bundle and shown to whoever answers it (L4).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

/// One option of a question. Every key is always present (L4a).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct QuestionOption {
    /// The identifier `selected_options` names (`q1_opt1`, …).
    pub option_id: String,
    /// What the option says.
    pub label: String,
    /// A longer explanation; `""` when none.
    pub description: String,
}

/// One question of a bundle. Every key is always present (L4a).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct Question {
    /// The identifier an answer names (`q1`, …).
    pub question_id: String,
    /// A short heading; `""` when none.
    pub title: String,
    /// The question itself.
    pub prompt: String,
    /// The choices, in the order the agent gave them (N3a rule 2).
    pub options: Vec<QuestionOption>,
    /// The agent expects several options may be chosen together. Only a
    /// hint to answerers: any question accepts several (N8). Stored only
    /// when set.
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    pub multi_select: bool,
    /// The option chosen if the bundle expires unanswered (when every
    /// question has one); stored only when set.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub default_option_id: String,
}

impl Question {
    /// The position of `option_id` among this question's options.
    #[must_use]
    pub fn option_position(&self, option_id: &str) -> Option<usize> {
        self.options.iter().position(|o| o.option_id == option_id)
    }

    /// The label of `option_id`, if the question has it.
    #[must_use]
    pub fn option_label(&self, option_id: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|o| o.option_id == option_id)
            .map(|o| o.label.as_str())
    }
}
