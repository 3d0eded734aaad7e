//! The hooks Clarify adds to an agent's settings, merged with what is
//! there and taken out again. An entry is Clarify's when its command runs
//! a `clarify` program's `hook` subcommand: installing again replaces
//! those (never a duplicate), uninstalling removes exactly those.

use serde_json::{Map, Value, json};

/// One hook Clarify adds: the event, its matcher (none for events
/// without tools), and the seconds the agent lets it run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `PreToolUse`, `PermissionRequest`, …
    pub event: &'static str,
    /// The tool-name matcher; `None` for `SessionEnd`.
    pub matcher: Option<&'static str>,
    /// The hook's `timeout`.
    pub timeout: u64,
}

/// Whether `command` runs `clarify … hook`: a program named `clarify…`
/// (any path, e.g. the absolute one the installer writes) whose first
/// argument is `hook`.
#[must_use]
pub fn is_ours(command: &str) -> bool {
    let words = shlex::split(command).unwrap_or_default();
    let program = words
        .first()
        .map_or("", |p| p.rsplit('/').next().unwrap_or(p));
    program.starts_with("clarify") && words.get(1).is_some_and(|a| a == "hook")
}

/// `settings` without Clarify's hooks: groups left empty go, then events
/// left empty, then `hooks` if it is left empty.
#[must_use]
pub fn without_ours(settings: &Value) -> Value {
    let mut settings = settings.clone();
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return settings;
    };
    for groups in hooks.values_mut() {
        let Some(list) = groups.as_array_mut() else {
            continue;
        };
        for group in list.iter_mut() {
            if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                inner.retain(|h| !h["command"].as_str().is_some_and(is_ours));
            }
        }
        list.retain(|g| !g["hooks"].as_array().is_some_and(Vec::is_empty));
    }
    hooks.retain(|_, groups| !groups.as_array().is_some_and(Vec::is_empty));
    if hooks.is_empty()
        && let Some(object) = settings.as_object_mut()
    {
        object.remove("hooks");
    }
    settings
}

/// `settings` with Clarify's `entries`, each running `command`, after
/// what was there.
///
/// # Errors
/// `settings` or its `hooks` is not an object, or an event's hooks not a
/// list.
pub fn with_ours(settings: &Value, entries: &[Entry], command: &str) -> Result<Value, String> {
    let mut settings = without_ours(settings);
    let object = settings
        .as_object_mut()
        .ok_or("the settings file is not a JSON object")?;
    let hooks = object
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("its \"hooks\" is not an object")?;
    for entry in entries {
        let groups = hooks
            .entry(entry.event)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| format!("its hooks.{} is not a list", entry.event))?;
        let mut group = json!({"hooks": [{
            "type": "command",
            "command": command,
            "timeout": entry.timeout,
        }]});
        if let Some(matcher) = entry.matcher {
            group["matcher"] = json!(matcher);
        }
        groups.push(group);
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRIES: [Entry; 2] = [
        Entry {
            event: "PreToolUse",
            matcher: Some("AskUserQuestion"),
            timeout: 150,
        },
        Entry {
            event: "SessionEnd",
            matcher: None,
            timeout: 30,
        },
    ];

    #[test]
    fn only_a_clarify_hook_command_is_ours() {
        assert!(is_ours("clarify hook"));
        assert!(is_ours("'/opt/my tools/clarify' hook --terminal-after 5"));
        assert!(!is_ours("clarify mcp"));
        assert!(!is_ours("python3 hook.py"));
        assert!(!is_ours("echo clarify hook"));
    }

    #[test]
    fn installing_twice_is_installing_once_and_uninstalling_restores() {
        let theirs = json!({"model": "x", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}]}});
        let once = with_ours(&theirs, &ENTRIES, "clarify hook").unwrap();
        assert_eq!(once["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(once["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 30);
        assert!(once["hooks"]["SessionEnd"][0].get("matcher").is_none());
        assert_eq!(with_ours(&once, &ENTRIES, "clarify hook").unwrap(), once);
        assert_eq!(without_ours(&once), theirs);
        assert_eq!(
            without_ours(&with_ours(&json!({}), &ENTRIES, "clarify hook").unwrap()),
            json!({})
        );
        assert!(with_ours(&json!([1]), &ENTRIES, "clarify hook").is_err());
    }
}
