//! Approvals (issue 47): a bundle may ask a person to allow a tool call an
//! agent is about to make (a permission prompt) rather than a question. The
//! call is shown as code before the options, never run; it is sized like
//! the other texts and part of what makes two asks identical or alike, so
//! one answer never approves two different calls.

use alloc::string::String;
use serde::{Deserialize, Serialize};

use crate::create::{CreateError, check_len};
use crate::field::FieldPath;

/// The longest tool name, in runes (a title's limit).
pub const MAX_TOOL_RUNES: usize = 200;
/// The longest call text, in runes (the shared context's limit: a diff).
pub const MAX_CALL_RUNES: usize = 20_000;

/// What a bundle asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum BundleKind {
    /// Questions to answer (the default).
    #[default]
    Question,
    /// Whether to allow the tool call in `tool_call`.
    Approval,
}

impl BundleKind {
    /// Whether this is the default kind (left out of an ask when so).
    #[must_use]
    pub fn is_question(&self) -> bool {
        *self == Self::Question
    }

    /// Its name on the wire.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::Approval => "approval",
        }
    }
}

/// The tool call an approval asks about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default)]
pub struct ToolCall {
    /// The tool's name as the agent calls it (`Bash`, `Edit`, `WebFetch`).
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 200,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]",
            required = true
        )
    )]
    pub tool: String,
    /// The call as text, shown as code: the command, the path and the
    /// diff, the URL, or the arguments.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 20000,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]",
            required = true
        )
    )]
    pub call: String,
}

/// The tool call of a new bundle of `kind`, checked: an approval names
/// one, a question none. The tool's name is trimmed; the call is kept as
/// written (its indentation is the code's).
///
/// # Errors
/// The rule broken, naming `tool_call` or its field.
pub fn check_tool_call(
    kind: BundleKind,
    call: Option<&ToolCall>,
) -> Result<Option<ToolCall>, CreateError> {
    let call = match (kind, call) {
        (BundleKind::Question, None) => return Ok(None),
        (BundleKind::Question, Some(_)) => return Err(CreateError::CallOnQuestion),
        (BundleKind::Approval, None) => return Err(CreateError::ApprovalWithoutCall),
        (BundleKind::Approval, Some(call)) => call,
    };
    let field = FieldPath::root("tool_call");
    // Judged as sent, before the trim, as the contract's maxLength says.
    text(&call.tool, field.clone().dot("tool"), MAX_TOOL_RUNES)?;
    let tool = call.tool.trim();
    text(call.call.as_str(), field.dot("call"), MAX_CALL_RUNES)?;
    Ok(Some(ToolCall {
        tool: String::from(tool),
        call: call.call.clone(),
    }))
}

impl ToolCall {
    /// The call cut to `max` characters (an ellipsis marks the cut), for a
    /// channel whose messages are bounded (Slack's sections, Telegram's
    /// messages, ntfy's); the whole call is in Clarify.
    #[must_use]
    pub fn shown(&self, max: usize) -> String {
        if self.call.chars().count() <= max {
            return self.call.clone();
        }
        let mut cut: String = self.call.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// An approval's tool call (issue 47), as its messages carry it; `None`
/// for a question.
#[must_use]
pub fn bundle_tool_call(messages: &[crate::stored::StoredMessage]) -> Option<&ToolCall> {
    messages.iter().find_map(|m| m.metadata.tool_call.as_ref())
}

fn text(text: &str, field: FieldPath, max: usize) -> Result<(), CreateError> {
    if text.trim().is_empty() {
        return Err(CreateError::Required { field });
    }
    check_len(text, field, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn call(tool: &str, call: &str) -> ToolCall {
        ToolCall {
            tool: tool.into(),
            call: call.into(),
        }
    }

    #[test]
    fn an_approval_needs_a_call_and_a_question_takes_none() {
        assert_eq!(check_tool_call(BundleKind::Question, None), Ok(None));
        let bash = call(" Bash ", "  npm publish\n");
        assert_eq!(
            check_tool_call(BundleKind::Approval, Some(&bash)),
            Ok(Some(call("Bash", "  npm publish\n")))
        );
        let missing = check_tool_call(BundleKind::Approval, None).unwrap_err();
        assert!(missing.to_string().starts_with("tool_call: "));
        let extra = check_tool_call(BundleKind::Question, Some(&bash)).unwrap_err();
        assert!(extra.to_string().starts_with("tool_call: "));
    }

    #[test]
    fn a_long_call_is_cut_with_an_ellipsis() {
        let long = call("Bash", "abcdef");
        assert_eq!(long.shown(6), "abcdef");
        assert_eq!(long.shown(4), "abc…");
    }

    #[test]
    fn each_field_is_named_when_empty_or_too_long() {
        let empty = check_tool_call(BundleKind::Approval, Some(&call("", "ls"))).unwrap_err();
        assert!(empty.to_string().starts_with("tool_call.tool: "), "{empty}");
        let long = "x".repeat(MAX_CALL_RUNES + 1);
        let long = check_tool_call(BundleKind::Approval, Some(&call("Bash", &long))).unwrap_err();
        assert!(long.to_string().starts_with("tool_call.call: "), "{long}");
        let nul = check_tool_call(BundleKind::Approval, Some(&call("Bash", "a\0"))).unwrap_err();
        assert!(nul.to_string().starts_with("tool_call.call: "), "{nul}");
    }
}
