//! `clarify mcp` in a process of its own, spoken to over its standard
//! input and output by the official Rust SDK's client, as an MCP client
//! (Claude Code, Codex, …) starts it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt as _;
use tokio::process::{Child, Command};

use crate::mcp::Recorder;

/// A `clarify mcp` process and the MCP client connected to it.
#[derive(Debug)]
pub struct StdioAgent {
    /// The client; dropping or cancelling it closes the process's stdin.
    pub client: rmcp::service::RunningService<rmcp::RoleClient, Recorder>,
    /// The process.
    pub child: Child,
}

/// A folder that is a git repository named `name` on `branch` (its
/// `.git/HEAD` only: `clarify mcp` reads files, it runs no program).
///
/// # Panics
/// When the folder cannot be made.
#[must_use]
pub fn repository(name: &str, branch: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("clarify-stdio-{}", clarify_server::ids::new_id()))
        .join(name);
    std::fs::create_dir_all(dir.join(".git")).expect("make the repository");
    std::fs::write(dir.join(".git/HEAD"), format!("ref: refs/heads/{branch}\n"))
        .expect("write HEAD");
    dir
}

impl StdioAgent {
    /// Starts `binary mcp --server SERVER` (a test's
    /// `env!("CARGO_BIN_EXE_clarify-under-test")`) in `dir` with `token` as
    /// `CLARIFY_TOKEN`, progress every second, and connects to it.
    ///
    /// # Panics
    /// When the process cannot start or the handshake fails.
    pub async fn start(binary: &str, server: &str, token: Option<&str>, dir: &Path) -> Self {
        Self::spawn(binary, server, token, dir, None).await
    }

    /// [`StdioAgent::start`] with `CLARIFY_WORKSPACE` set to `workspace`.
    ///
    /// # Panics
    /// As [`StdioAgent::start`].
    pub async fn start_in(
        binary: &str,
        server: &str,
        token: Option<&str>,
        dir: &Path,
        workspace: &str,
    ) -> Self {
        Self::spawn(binary, server, token, dir, Some(workspace)).await
    }

    async fn spawn(
        binary: &str,
        server: &str,
        token: Option<&str>,
        dir: &Path,
        workspace: Option<&str>,
    ) -> Self {
        let mut command = Command::new(binary);
        command
            .args(["mcp", "--server", server, "--progress-every", "1"])
            .current_dir(dir)
            .env_remove("CLARIFY_TOKEN")
            .env_remove("CLARIFY_SERVER")
            .env_remove("CLARIFY_WORKSPACE")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        if let Some(token) = token {
            command.env("CLARIFY_TOKEN", token);
        }
        if let Some(workspace) = workspace {
            command.env("CLARIFY_WORKSPACE", workspace);
        }
        let mut child = command.spawn().expect("start clarify mcp");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let client = Recorder::default()
            .serve((stdout, stdin))
            .await
            .expect("MCP handshake over stdio");
        Self { client, child }
    }

    /// Closes the process's stdin (the conversation ended) and waits for
    /// it to exit; returns whether it exited successfully.
    ///
    /// # Panics
    /// When it has not exited 20 s after.
    pub async fn close(mut self) -> bool {
        let _ = self.client.cancel().await;
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("clarify mcp exits when its stdin closes")
            .expect("wait for clarify mcp");
        status.success()
    }
}
