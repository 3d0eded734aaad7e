//! Shared state handed to every request handler.

use crate::db::Db;
use crate::events::Events;
use crate::lifecycle::Lifecycle;

/// How the server was started.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Require an identity on every API request.
    pub auth: bool,
    /// An origin allowed to call the API with credentials (split-origin
    /// development); none by default.
    pub cors_origin: Option<String>,
    /// Host names MCP clients may use besides localhost (rmcp refuses other
    /// `Host` headers, against DNS rebinding).
    pub mcp_allowed_hosts: Vec<String>,
    /// How often a blocked `ask_user_question_kandev` reports progress;
    /// 10 s when unset.
    pub progress_interval: Option<std::time::Duration>,
}

/// Cheap to clone: everything inside is a handle.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AppState {
    /// The clarification lifecycle (and through it the database).
    pub lifecycle: Lifecycle,
    /// Live events for browsers.
    pub events: Events,
    /// How the server was started.
    pub config: Config,
    /// Cancelled when the server shuts down: ends open MCP streams,
    /// WebSockets and long polls so that shutdown does not wait on them.
    pub shutdown: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// State over an open database. Runs start-up reconciliation (R6).
    ///
    /// # Errors
    /// Database errors during reconciliation.
    pub async fn new(db: Db, config: Config) -> Result<Self, crate::http::error::Error> {
        let events = Events::default();
        let shutdown = tokio_util::sync::CancellationToken::new();
        let lifecycle = Lifecycle::new(db, events.clone(), shutdown.clone());
        lifecycle.reconcile().await?;
        Ok(Self {
            lifecycle,
            events,
            config,
            shutdown,
        })
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        self.lifecycle.db()
    }
}
