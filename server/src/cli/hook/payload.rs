//! The JSON an agent's hook is given on stdin (Claude Code's and Codex's
//! share these names; docs/DESIGN.md "Agent hooks" has the sources). Read
//! leniently: a field this version does not know is ignored, one it needs
//! and misses is named.

use serde::Deserialize;
use serde_json::Value;

/// One hook call.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Payload {
    /// `PreToolUse`, `PermissionRequest`, `PostToolUse`, `SessionEnd`, …
    pub hook_event_name: String,
    /// The agent's conversation: one Clarify session each.
    pub session_id: String,
    /// Codex's turn (Claude Code sends none): tells the agents apart.
    pub turn_id: String,
    /// Where the agent works: names the project's task.
    pub cwd: String,
    /// The tool called (`AskUserQuestion`, `Bash`, `Edit`, …).
    pub tool_name: String,
    /// Its arguments.
    pub tool_input: Value,
    /// The call's id: ties a `PostToolUse` to its `PreToolUse`.
    pub tool_use_id: String,
    /// `PostToolUse`: what the tool returned.
    pub tool_response: Value,
    /// `PermissionRequest` (Claude Code): the rules "always allow" would add.
    pub permission_suggestions: Value,
}

impl Payload {
    /// Reads `text`, which must name the event and the agent's session.
    ///
    /// # Errors
    /// Not JSON, or an event or session missing.
    pub fn read(text: &str) -> Result<Self, String> {
        let payload: Self = serde_json::from_str(text)
            .map_err(|e| format!("the hook input is not the JSON expected: {e}"))?;
        if payload.hook_event_name.trim().is_empty() {
            return Err("the hook input names no hook_event_name".into());
        }
        if payload.session_id.trim().is_empty() && payload.hook_event_name != "SessionEnd" {
            return Err("the hook input names no session_id".into());
        }
        Ok(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::Payload;

    #[test]
    fn what_is_not_a_hook_call_is_refused_by_name() {
        assert!(Payload::read("nope").unwrap_err().contains("not the JSON"));
        assert!(
            Payload::read(r#"{"session_id":"s"}"#)
                .unwrap_err()
                .contains("hook_event_name")
        );
        let read = Payload::read(
            r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","new":1}"#,
        )
        .unwrap();
        assert_eq!(read.tool_name, "Bash");
    }
}
