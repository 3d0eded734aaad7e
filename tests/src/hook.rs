//! `clarify hook` as Claude Code and Codex run it (issue 47): the real
//! binary, a recorded hook payload on stdin, its answer read from stdout.
//! Each `HookRunner` keeps its own state folder, so tests never share a
//! conversation's record.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tokio::io::AsyncWriteExt as _;
use tokio::process::{Child, Command};

/// A recorded payload from `tests/fixtures/hooks/`.
///
/// # Panics
/// When the file is missing or not JSON.
#[must_use]
pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/hooks")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("read the fixture");
    serde_json::from_str(&text).expect("the fixture is JSON")
}

/// A recorded payload made a test's own: a new agent session, in a
/// scratch repository.
#[must_use]
pub fn payload(name: &str) -> Value {
    let mut payload = fixture(name);
    payload["session_id"] = serde_json::json!(clarify_server::ids::new_id());
    payload["cwd"] = serde_json::json!(
        crate::stdio::repository("shop", "main")
            .display()
            .to_string()
    );
    payload
}

/// The same conversation's next event: `from`'s session and cwd.
#[must_use]
pub fn next(name: &str, from: &Value) -> Value {
    let mut payload = fixture(name);
    payload["session_id"] = from["session_id"].clone();
    payload["cwd"] = from["cwd"].clone();
    payload
}

/// What one hook call printed.
#[derive(Debug)]
pub struct HookOutput {
    /// The exit code.
    pub code: i32,
    /// stdout read as JSON; `Null` when empty.
    pub json: Value,
    /// stdout as written.
    pub stdout: String,
    /// stderr as written.
    pub stderr: String,
}

/// Runs `clarify hook` against one server.
#[derive(Debug, Clone)]
pub struct HookRunner {
    binary: PathBuf,
    server: String,
    token: Option<String>,
    state: PathBuf,
    flags: Vec<String>,
}

impl HookRunner {
    /// A runner of `binary` (the test's `CARGO_BIN_EXE_clarify-under-test`)
    /// against `server`, with a fresh state folder.
    #[must_use]
    pub fn new(binary: &str, server: &str) -> Self {
        let state =
            std::env::temp_dir().join(format!("clarify-hook-{}", clarify_server::ids::new_id()));
        Self {
            binary: binary.into(),
            server: server.to_owned(),
            token: None,
            state,
            flags: Vec::new(),
        }
    }

    /// The same, sending `token` as `CLARIFY_TOKEN`.
    #[must_use]
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    /// The same, with more flags (`--terminal-after 1`, `--agent codex`).
    #[must_use]
    pub fn with_flags(mut self, flags: &[&str]) -> Self {
        self.flags.extend(flags.iter().map(|f| (*f).to_owned()));
        self
    }

    /// Starts one hook call with `payload` on its stdin (then closed).
    ///
    /// # Panics
    /// When the process cannot start.
    pub async fn spawn(&self, payload: &Value) -> Child {
        let mut command = Command::new(&self.binary);
        command
            .arg("hook")
            .args(&self.flags)
            .env("CLARIFY_SERVER", &self.server)
            .env("CLARIFY_HOOK_STATE", &self.state)
            .env_remove("CLARIFY_TOKEN")
            .env_remove("CLARIFY_HOOK_TERMINAL_AFTER")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(token) = &self.token {
            command.env("CLARIFY_TOKEN", token);
        }
        let mut child = command.spawn().expect("start clarify hook");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(payload.to_string().as_bytes())
            .await
            .expect("write the payload");
        drop(stdin);
        child
    }

    /// Runs one hook call to its end.
    ///
    /// # Panics
    /// As [`HookRunner::spawn`].
    pub async fn run(&self, payload: &Value) -> HookOutput {
        finish(self.spawn(payload).await).await
    }

    /// Runs one call with `text` (not necessarily JSON) on stdin.
    ///
    /// # Panics
    /// As [`HookRunner::spawn`].
    pub async fn run_text(&self, text: &str) -> HookOutput {
        let mut command = Command::new(&self.binary);
        let mut child = command
            .arg("hook")
            .env("CLARIFY_SERVER", &self.server)
            .env("CLARIFY_HOOK_STATE", &self.state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start clarify hook");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(text.as_bytes()).await.expect("write");
        drop(stdin);
        finish(child).await
    }
}

/// Waits for a hook call started with [`HookRunner::spawn`].
///
/// # Panics
/// When it cannot be waited for, or prints what is not UTF-8.
pub async fn finish(child: Child) -> HookOutput {
    let output = child.wait_with_output().await.expect("wait for the hook");
    let stdout = String::from_utf8(output.stdout).expect("utf-8 stdout");
    HookOutput {
        code: output.status.code().unwrap_or(-1),
        json: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stdout,
        stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
    }
}
