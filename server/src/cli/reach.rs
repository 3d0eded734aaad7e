//! The flags every client command reaches the server with: where it is and
//! the person's token, read from the environment as the hooks and the MCP
//! bridge are configured.

use clap::Args;

/// Where the server is and as whom to call it.
#[derive(Debug, Clone, Args)]
pub struct Reach {
    /// The Clarify server.
    #[arg(long, env = "CLARIFY_SERVER", default_value = "http://127.0.0.1:7420")]
    pub server: String,
    /// A personal access token (`clarify token create`), needed under --auth.
    #[arg(long, env = "CLARIFY_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl Reach {
    /// The token, unless it is blank (an unset variable in a hook's
    /// configuration arrives as "").
    #[must_use]
    pub fn token(&self) -> Option<String> {
        self.token.clone().filter(|t| !t.trim().is_empty())
    }
}
