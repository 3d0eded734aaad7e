//! What `clarify hook` keeps between its calls: each call is its own
//! process, but an agent's conversation is one Clarify session, and a
//! `PostToolUse` must find the bundle its `PreToolUse` asked. One small
//! file per agent session (named by a hash of the server and the agent's
//! session id, readable by its owner only, since it holds the session's
//! agent token), written whole through a rename and locked while a call
//! reads and writes it, so two hooks of one conversation never make two
//! sessions.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// One agent session's record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Record {
    /// The Clarify session, once made.
    pub session_id: String,
    /// Its agent token.
    pub agent_token: String,
    /// Each tool call asked (its `tool_use_id`) and its bundle.
    pub asked: BTreeMap<String, String>,
}

/// The record's file, held locked until dropped.
#[derive(Debug)]
pub struct Held {
    path: PathBuf,
    _lock: File,
}

/// The folder records live in: `$CLARIFY_HOOK_STATE`, else
/// `$XDG_STATE_HOME/clarify/hooks`, else `~/.local/state/clarify/hooks`.
#[must_use]
pub fn default_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(state) = var("XDG_STATE_HOME") {
        return PathBuf::from(state).join("clarify/hooks");
    }
    var("HOME").map_or_else(
        || std::env::temp_dir().join("clarify-hooks"),
        |home| PathBuf::from(home).join(".local/state/clarify/hooks"),
    )
}

impl Held {
    /// Locks the record of `agent_session` on `server` in `dir` (made if
    /// missing), waiting for another call of the same conversation.
    ///
    /// # Errors
    /// The folder or the lock cannot be made.
    pub fn lock(dir: &Path, server: &str, agent_session: &str) -> Result<Self, String> {
        make_private_dir(dir)?;
        let name = hex(&Sha256::digest(format!("{server}\n{agent_session}")));
        let lock = open_private(&dir.join(format!("{name}.lock")))?;
        lock.lock()
            .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
        Ok(Self {
            path: dir.join(format!("{name}.json")),
            _lock: lock,
        })
    }

    /// The record; empty when there is none yet (or it cannot be read:
    /// a new session is then made, never a guess).
    #[must_use]
    pub fn read(&self) -> Record {
        fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Replaces the record.
    ///
    /// # Errors
    /// It cannot be written.
    pub fn write(&self, record: &Record) -> Result<(), String> {
        let fresh = self.path.with_extension("json.new");
        let mut file = open_private(&fresh)?;
        let text = serde_json::to_vec(record).unwrap_or_default();
        file.set_len(0)
            .and_then(|()| file.write_all(&text))
            .and_then(|()| fs::rename(&fresh, &self.path))
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }

    /// Forgets the record (the session ended).
    pub fn remove(&self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The keys a tool call's bundle is recorded under: its `tool_use_id`
/// (`PreToolUse` and `PostToolUse` carry it) and, for `AskUserQuestion`,
/// its questions (Claude Code's `PermissionRequest` carries no id).
#[must_use]
pub fn keys(payload: &super::Payload) -> Vec<String> {
    let mut keys = Vec::new();
    if !payload.tool_use_id.is_empty() {
        keys.push(payload.tool_use_id.clone());
    }
    if payload.tool_name == "AskUserQuestion" {
        let questions = payload.tool_input["questions"].to_string();
        keys.push(format!("questions:{}", hex(&Sha256::digest(questions))));
    }
    keys
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

fn make_private_dir(dir: &Path) -> Result<(), String> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot make {}: {e}", dir.display()))
}

fn open_private(path: &Path) -> Result<File, String> {
    let mut options = OpenOptions::new();
    options.create(true).write(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_kept_per_server_and_agent_session() {
        let dir = std::env::temp_dir().join(format!("clarify-hook-state-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let held = Held::lock(&dir, "http://a", "s1").unwrap();
        assert_eq!(held.read(), Record::default());
        let mut record = Record {
            session_id: "sess".into(),
            agent_token: "tok".into(),
            ..Record::default()
        };
        record.asked.insert("toolu_1".into(), "p1".into());
        held.write(&record).unwrap();
        assert_eq!(held.read(), record);
        drop(held);
        assert_eq!(Held::lock(&dir, "http://a", "s1").unwrap().read(), record);
        assert_eq!(
            Held::lock(&dir, "http://b", "s1").unwrap().read(),
            Record::default()
        );
        let held = Held::lock(&dir, "http://a", "s1").unwrap();
        held.remove();
        assert_eq!(held.read(), Record::default());
        let _ = fs::remove_dir_all(&dir);
    }
}
