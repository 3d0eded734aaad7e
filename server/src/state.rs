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
}

impl AppState {
    /// State over an open database. Runs start-up reconciliation (R6).
    ///
    /// # Errors
    /// Database errors during reconciliation.
    pub async fn new(db: Db, config: Config) -> Result<Self, crate::http::error::Error> {
        let events = Events::default();
        let lifecycle = Lifecycle::new(db, events.clone());
        lifecycle.reconcile().await?;
        Ok(Self {
            lifecycle,
            events,
            config,
        })
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        self.lifecycle.db()
    }
}
