//! A permission prompt (`PermissionRequest`, Claude Code's and Codex's)
//! as an approval bundle and back: the call shown as code (the command,
//! the path and the change, the URL, else the arguments), one question
//! whose options are Allow once, Allow for this session (Claude Code only:
//! Codex refuses a decision carrying permissions) and Deny; a reason given
//! with Deny, or a decline's, goes back as the message the model reads.

use clarify_core::approval::MAX_CALL_RUNES;
use clarify_core::{BundleKind, NewBundle, NewOption, NewQuestion, RespondBody, Status, ToolCall};
use serde_json::{Value, json};

use super::AgentKind;
use super::payload::Payload;

const ONCE: &str = "Allow once";
const SESSION: &str = "Allow for this session";
const DENY: &str = "Deny";

/// The approval bundle for `payload` from `agent`.
#[must_use]
pub fn bundle(payload: &Payload, agent: AgentKind) -> NewBundle {
    let tool = if payload.tool_name.trim().is_empty() {
        "a tool"
    } else {
        payload.tool_name.trim()
    };
    let mut labels = vec![ONCE];
    if agent == AgentKind::Claude {
        labels.push(SESSION);
    }
    labels.push(DENY);
    let description = payload.tool_input["description"]
        .as_str()
        .unwrap_or_default();
    let call = call_text(&payload.tool_name, &payload.tool_input);
    NewBundle {
        questions: vec![NewQuestion {
            title: format!("Allow {tool}?"),
            // The call's first line in the prompt too: every surface shows
            // a prompt, not every one knows an approval's call.
            prompt: format!("{} asks to use {tool}: {}", agent.name(), code_span(&call)),
            options: labels
                .into_iter()
                .map(|label| NewOption {
                    label: label.to_owned(),
                    ..NewOption::default()
                })
                .collect(),
            ..NewQuestion::default()
        }],
        context: description.to_owned(),
        kind: BundleKind::Approval,
        tool_call: Some(ToolCall {
            tool: tool.to_owned(),
            call,
        }),
        ..NewBundle::default()
    }
}

/// The call as a person reads it, cut to what a bundle holds.
#[must_use]
pub fn call_text(tool: &str, input: &Value) -> String {
    let s = |key: &str| input[key].as_str().unwrap_or_default();
    let text = match tool {
        "Bash" if !s("command").is_empty() => s("command").to_owned(),
        "Edit" => format!(
            "{}\n{}",
            s("file_path"),
            diff(s("old_string"), s("new_string"))
        ),
        "MultiEdit" => {
            let edits = input["edits"].as_array().map_or(&[][..], Vec::as_slice);
            let mut text = s("file_path").to_owned();
            for edit in edits {
                let old = edit["old_string"].as_str().unwrap_or_default();
                let new = edit["new_string"].as_str().unwrap_or_default();
                text.push('\n');
                text.push_str(&diff(old, new));
            }
            text
        }
        "Write" => format!("{}\n{}", s("file_path"), diff("", s("content"))),
        "WebFetch" if !s("url").is_empty() => s("url").to_owned(),
        "WebSearch" if !s("query").is_empty() => s("query").to_owned(),
        _ => serde_json::to_string_pretty(input).unwrap_or_default(),
    };
    let text = if text.trim().is_empty() {
        tool.to_owned()
    } else {
        text
    };
    let call = ToolCall {
        tool: String::new(),
        call: text,
    };
    call.shown(MAX_CALL_RUNES)
}

/// `call`'s first line (200 characters at most) as a CommonMark code
/// span: fenced by one backtick more than its longest run, so nothing in
/// it becomes markup.
fn code_span(call: &str) -> String {
    let first = call.lines().next().unwrap_or_default();
    let mut line: String = first.chars().take(200).collect();
    if line.len() < call.trim_end().len() {
        line.push('…');
    }
    let longest = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {line} {fence}")
}

/// The change as a diff of lines: every old line taken out, every new one
/// put in (the agent gives the two texts, not a diff).
fn diff(old: &str, new: &str) -> String {
    let minus = old.lines().map(|l| format!("-{l}"));
    let plus = new.lines().map(|l| format!("+{l}"));
    minus.chain(plus).collect::<Vec<_>>().join("\n")
}

/// The hook's answer for the settled approval of `payload`.
#[must_use]
pub fn output(payload: &Payload, agent: AgentKind, body: &RespondBody) -> Value {
    let response = &body.response;
    let decision = if response.rejected {
        deny(&super::declined(&response.reject_reason))
    } else if let Some(answer) = response.answers.first() {
        let reason = answer.custom_text.trim();
        match answer.selected_options.first().map(String::as_str) {
            // Options in the order offered: `q1_opt1` Allow once, then
            // (Claude Code) for this session, then Deny.
            Some("q1_opt1") => json!({"behavior": "allow"}),
            Some("q1_opt2") if agent == AgentKind::Claude => json!({
                "behavior": "allow",
                "updatedPermissions": for_this_session(payload),
            }),
            // Deny, or text alone: never read as an allow.
            _ if reason.is_empty() => deny("The user denied this."),
            _ => deny(&format!("The user denied this: {reason}")),
        }
    } else if body.status == Status::Expired {
        deny(super::NO_ANSWER_IN_TIME)
    } else {
        deny("The user denied this.")
    };
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

fn deny(message: &str) -> Value {
    json!({"behavior": "deny", "message": message})
}

/// The rules "allow for this session" adds: for a command, that exact
/// command (Claude Code's own suggestion may be only a folder, which did
/// not spare the next prompt, as measured); else Claude Code's own
/// suggestions (a domain for a fetch, accepting edits), kept for the
/// session only; else the tool.
fn for_this_session(payload: &Payload) -> Value {
    let command = payload.tool_input["command"].as_str().unwrap_or_default();
    if payload.tool_name == "Bash" && !command.trim().is_empty() {
        return json!([{
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": command}],
            "behavior": "allow",
            "destination": "session",
        }]);
    }
    let suggested = payload
        .permission_suggestions
        .as_array()
        .filter(|s| !s.is_empty());
    match suggested {
        Some(suggestions) => Value::Array(
            suggestions
                .iter()
                .map(|s| {
                    let mut s = s.clone();
                    s["destination"] = json!("session");
                    s
                })
                .collect(),
        ),
        None => json!([{
            "type": "addRules",
            "rules": [{"toolName": payload.tool_name}],
            "behavior": "allow",
            "destination": "session",
        }]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tool_shows_its_call() {
        let bash = json!({"command": "npm publish", "description": "Publish"});
        assert_eq!(call_text("Bash", &bash), "npm publish");
        let edit = json!({"file_path": "/p/a.rs", "old_string": "a\nb", "new_string": "c"});
        assert_eq!(call_text("Edit", &edit), "/p/a.rs\n-a\n-b\n+c");
        let fetch = json!({"url": "https://x.test/", "prompt": "read"});
        assert_eq!(call_text("WebFetch", &fetch), "https://x.test/");
        let other = call_text("mcp__db__drop", &json!({"table": "users"}));
        assert!(other.contains("\"table\": \"users\""), "{other}");
        let long = call_text("Bash", &json!({"command": "x".repeat(MAX_CALL_RUNES + 5)}));
        assert_eq!(long.chars().count(), MAX_CALL_RUNES);
    }

    #[test]
    fn the_prompt_shows_the_calls_first_line_as_code() {
        assert_eq!(code_span("echo ran > ran.txt"), "` echo ran > ran.txt `");
        assert_eq!(code_span("a ``b`` c\nmore"), "``` a ``b`` c… ```");
    }
}
