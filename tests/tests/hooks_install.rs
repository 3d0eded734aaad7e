//! `clarify hooks install|uninstall` (issue 47 item 4): one command adds
//! Clarify's hooks to Claude Code's or Codex's settings, merged with what
//! is there, idempotent, a backup kept; `--dry-run` writes nothing;
//! uninstall removes exactly what was added. A scratch HOME and project.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_clarify-under-test");

fn scratch() -> (PathBuf, PathBuf) {
    let base =
        std::env::temp_dir().join(format!("clarify-hooks-{}", clarify_server::ids::new_id()));
    let (home, project) = (base.join("home"), base.join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    (home, project)
}

fn hooks(home: &Path, dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(BINARY)
        .arg("hooks")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .output()
        .unwrap()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn commands(settings: &Value, event: &str) -> Vec<(String, String, u64)> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| {
            let matcher = group["matcher"].as_str().unwrap_or("").to_owned();
            group["hooks"].as_array().unwrap().iter().map(move |h| {
                (
                    matcher.clone(),
                    h["command"].as_str().unwrap().to_owned(),
                    h["timeout"].as_u64().unwrap_or(0),
                )
            })
        })
        .collect()
}

/// issue 47 item 4: into the project's `.claude/settings.json`, beside
/// what is there; again changes nothing; uninstall gives back the file.
#[test]
fn claude_project_install_merges_is_idempotent_keeps_a_backup_and_uninstalls_exactly() {
    let (home, project) = scratch();
    let path = project.join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let theirs = json!({"permissions": {"defaultMode": "default"}, "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}});
    std::fs::write(&path, theirs.to_string()).unwrap();

    // From a folder inside the repository: its top is the project.
    let out = hooks(
        &home,
        &project.join("src"),
        &["install", "claude", "--project"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = read(&path);
    assert_eq!(read(&project.join(".claude/settings.json.bak")), theirs);
    assert_eq!(installed["permissions"], theirs["permissions"]);
    let pre = commands(&installed, "PreToolUse");
    assert_eq!(pre.len(), 2, "{installed}");
    assert_eq!(pre[0].1, "./lint.sh");
    assert_eq!(pre[1].0, "AskUserQuestion");
    assert!(
        pre[1].1.starts_with(BINARY) && pre[1].1.ends_with(" hook"),
        "{}",
        pre[1].1
    );
    assert_eq!(
        pre[1].2, 60,
        "the agent never kills a wait before it falls through"
    );
    assert_eq!(
        commands(&installed, "PermissionRequest")[0].2,
        3_600,
        "it races the dialog"
    );
    assert_eq!(commands(&installed, "PostToolUse")[0].0, "AskUserQuestion");
    assert_eq!(commands(&installed, "PermissionRequest")[0].0, "*");
    assert_eq!(commands(&installed, "SessionEnd").len(), 1);
    assert!(installed["hooks"]["SessionEnd"][0].get("matcher").is_none());

    let again = hooks(&home, &project, &["install", "claude", "--project"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("unchanged"));
    assert_eq!(read(&path), installed);

    let out = hooks(&home, &project, &["uninstall", "claude", "--project"]);
    assert!(out.status.success());
    assert_eq!(read(&path), theirs);
    assert!(
        !home.join(".claude").exists(),
        "--project touches no user settings"
    );
}

/// issue 47 item 4: `--dry-run` prints the file it would write and
/// writes nothing; `--user` (the default) is `~/.claude/settings.json`.
#[test]
fn dry_run_writes_nothing_and_user_settings_are_the_default() {
    let (home, project) = scratch();
    let out = hooks(
        &home,
        &project,
        &["install", "claude", "--dry-run", "--terminal-after", "5"],
    );
    assert!(out.status.success());
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("dry run"), "{printed}");
    assert!(printed.contains("--terminal-after 5"), "{printed}");
    assert!(!home.join(".claude/settings.json").exists());

    let out = hooks(
        &home,
        &project,
        &["install", "claude", "--server", "http://10.0.0.2:7420"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = read(&home.join(".claude/settings.json"));
    let (_, command, _) = &commands(&installed, "PermissionRequest")[0];
    assert!(
        command.ends_with("--server http://10.0.0.2:7420"),
        "{command}"
    );
    assert!(
        !home.join(".claude/settings.json.bak").exists(),
        "nothing to back up"
    );
}

/// issue 47 item 4: Codex's hooks file gets the permission prompts and the
/// session's end, with `--agent codex`; the person is told to trust them.
#[test]
fn codex_install_writes_its_hooks_file_and_says_to_trust_them() {
    let (home, project) = scratch();
    let out = hooks(&home, &project, &["install", "codex"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("/hooks"));
    let installed = read(&home.join(".codex/hooks.json"));
    let permission = commands(&installed, "PermissionRequest");
    assert_eq!(permission.len(), 1);
    assert!(
        permission[0].1.ends_with(" hook --agent codex"),
        "{}",
        permission[0].1
    );
    assert_eq!(permission[0].2, 150);
    assert_eq!(
        commands(&installed, "SessionEnd")[0].2,
        3,
        "Codex clamps it to 3 s"
    );
    assert!(installed["hooks"].get("PreToolUse").is_none());
    assert_eq!(commands(&installed, "SessionEnd").len(), 1);
    hooks(&home, &project, &["uninstall", "codex"]);
    assert_eq!(read(&home.join(".codex/hooks.json")), json!({}));
}

/// issue 47 item 4: a settings file that is not JSON is left alone, and
/// the error says which file.
#[test]
fn a_broken_settings_file_is_left_as_it_is() {
    let (home, project) = scratch();
    let path = home.join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    let out = hooks(&home, &project, &["install", "claude", "--user"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("settings.json is not JSON"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
}
