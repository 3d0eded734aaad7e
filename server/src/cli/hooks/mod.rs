//! `clarify hooks install|uninstall claude|codex`: one line to connect an
//! agent (issue 47 item 4). Claude Code's hooks go in `~/.claude/settings.json`
//! (`--user`, the default) or the project's `.claude/settings.json`
//! (`--project`); Codex's in `~/.codex/hooks.json` (`$CODEX_HOME`) or the
//! project's `.codex/hooks.json`. Merged with what is there, idempotent,
//! the previous file kept as `….bak`; `--dry-run` prints the file it would
//! write. The command written is this program's own path, so the agent
//! runs the same `clarify` whatever its `PATH`.

mod settings;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;

use settings::Entry;

/// Seconds Claude Code lets a permission prompt's hook wait for an answer
/// from elsewhere while its own dialog is shown.
const RACING: u64 = 3_600;

/// Codex clamps a `SessionEnd` hook's timeout to 3 s (measured): asked
/// for no more, it says nothing of it.
const CODEX_SESSION_END: u64 = 3;

/// `clarify hooks …`.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add Clarify's hooks to an agent's settings.
    Install(HooksArgs),
    /// Remove exactly the hooks `install` added.
    Uninstall(HooksArgs),
}

/// Which agent, where, and how.
#[derive(Debug, Clone, Args)]
pub struct HooksArgs {
    /// `claude` (Claude Code) or `codex`.
    #[arg(value_enum)]
    pub agent: crate::cli::hook::AgentKind,
    /// Your own settings, for every project (the default).
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// This project's settings (the repository around the working
    /// directory), shared with whoever clones it.
    #[arg(long)]
    pub project: bool,
    /// Print the file as it would be written; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The hooks' `--terminal-after` (see `clarify hook --help`): how long
    /// a hook holding the agent's dialog back waits for an answer from
    /// elsewhere. 0 for Claude Code by default (its permission prompt
    /// races the dialog shown at once), 90 for Codex (it holds its dialog
    /// back while its hook runs).
    #[arg(long, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub terminal_after: Option<u64>,
    /// A server the hooks ask (written into the command); otherwise they
    /// read CLARIFY_SERVER from the agent's environment. Tokens are never
    /// written: set CLARIFY_TOKEN where the agent runs.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
}

/// Runs `clarify hooks …`: 0 done, 1 an error (said on stderr).
pub fn run(command: &HooksCommand) -> ExitCode {
    let (args, install) = match command {
        HooksCommand::Install(args) => (args, true),
        HooksCommand::Uninstall(args) => (args, false),
    };
    match apply(args, install) {
        Ok(lines) => {
            say(&lines, std::io::stdout());
            ExitCode::SUCCESS
        }
        Err(why) => {
            say(&format!("clarify hooks: {why}"), std::io::stderr());
            ExitCode::FAILURE
        }
    }
}

fn say(text: &str, mut to: impl std::io::Write) {
    let _ = writeln!(to, "{text}");
}

fn apply(args: &HooksArgs, install: bool) -> Result<String, String> {
    let path = settings_path(args)?;
    let before = match std::fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Value::Object(serde_json::Map::new()),
        Ok(text) => serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON ({e}); left as it is", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(serde_json::Map::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let after = if install {
        settings::with_ours(&before, &entries(args), &command(args)?)
            .map_err(|e| format!("{}: {e}; left as it is", path.display()))?
    } else {
        settings::without_ours(&before)
    };
    let text = serde_json::to_string_pretty(&after).unwrap_or_default() + "\n";
    let done = if install { "installed" } else { "uninstalled" };
    if args.dry_run {
        return Ok(format!(
            "# {} (dry run: nothing written)\n{text}",
            path.display()
        ));
    }
    if after == before {
        return Ok(format!("{}: already {done}; unchanged", path.display()));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    if path.exists() {
        let backup = backup_path(&path);
        std::fs::copy(&path, &backup)
            .map_err(|e| format!("cannot keep a backup at {}: {e}", backup.display()))?;
    }
    let fresh = path.with_extension("json.clarify-new");
    std::fs::write(&fresh, &text)
        .and_then(|()| std::fs::rename(&fresh, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut told = format!("{}: Clarify's hooks {done}", path.display());
    if install && args.agent == crate::cli::hook::AgentKind::Codex {
        told.push_str(
            "\nCodex runs a new hook only once you trust it: open /hooks in Codex and trust \
             Clarify's.",
        );
    }
    Ok(told)
}

/// `--terminal-after` as given, else the agent's default.
fn terminal_after(args: &HooksArgs) -> u64 {
    args.agent
        .terminal_after(args.terminal_after.map(std::time::Duration::from_secs))
        .as_secs()
}

/// What each agent's hooks are. A hook that holds the dialog back waits
/// up to `--terminal-after`, and its `timeout` is a minute more, so the
/// agent never kills one about to fall through on its own; Claude Code's
/// permission prompt races its dialog, so it may wait an hour.
fn entries(args: &HooksArgs) -> Vec<Entry> {
    let claude = args.agent == crate::cli::hook::AgentKind::Claude;
    let waits = terminal_after(args) + 60;
    let short = if claude { 30 } else { CODEX_SESSION_END };
    let mut entries = vec![Entry {
        event: "PermissionRequest",
        matcher: Some("*"),
        timeout: if claude { RACING } else { waits },
    }];
    if claude {
        entries.insert(
            0,
            Entry {
                event: "PreToolUse",
                matcher: Some("AskUserQuestion"),
                timeout: waits,
            },
        );
        entries.push(Entry {
            event: "PostToolUse",
            matcher: Some("AskUserQuestion"),
            timeout: short,
        });
    }
    entries.push(Entry {
        event: "SessionEnd",
        matcher: None,
        timeout: short,
    });
    entries
}

/// `/path/to/clarify hook [--agent codex] [--terminal-after N] [--server URL]`.
fn command(args: &HooksArgs) -> Result<String, String> {
    let program =
        std::env::current_exe().map_err(|e| format!("cannot tell where this clarify is: {e}"))?;
    let mut words = vec![program.display().to_string(), "hook".to_owned()];
    if args.agent == crate::cli::hook::AgentKind::Codex {
        words.extend(["--agent".to_owned(), "codex".to_owned()]);
    }
    // Left out unless given: CLARIFY_HOOK_TERMINAL_AFTER where the agent
    // runs then decides, else the agent's default.
    if let Some(seconds) = args.terminal_after {
        words.extend(["--terminal-after".to_owned(), seconds.to_string()]);
    }
    if let Some(server) = &args.server {
        words.extend(["--server".to_owned(), server.clone()]);
    }
    shlex::try_join(words.iter().map(String::as_str))
        .map_err(|e| format!("cannot write the command: {e}"))
}

fn settings_path(args: &HooksArgs) -> Result<PathBuf, String> {
    let claude = args.agent == crate::cli::hook::AgentKind::Claude;
    if args.project {
        let here = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
        let root = here
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(&here);
        return Ok(if claude {
            root.join(".claude/settings.json")
        } else {
            root.join(".codex/hooks.json")
        });
    }
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if !claude && let Some(home) = var("CODEX_HOME") {
        return Ok(home.join("hooks.json"));
    }
    let home = var("HOME").ok_or("HOME is not set; use --project")?;
    Ok(if claude {
        home.join(".claude/settings.json")
    } else {
        home.join(".codex/hooks.json")
    })
}

fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}
