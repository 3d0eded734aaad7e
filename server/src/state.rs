//! Shared state handed to every request handler.

use crate::db::Db;
use crate::events::Events;
use crate::lifecycle::Lifecycle;

/// Cheap to clone: everything inside is a handle.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AppState {
    /// The clarification lifecycle (and through it the database).
    pub lifecycle: Lifecycle,
    /// Live events for browsers.
    pub events: Events,
}

impl AppState {
    /// State over an open database. Runs start-up reconciliation (R6).
    ///
    /// # Errors
    /// Database errors during reconciliation.
    pub async fn new(db: Db) -> Result<Self, crate::http::error::Error> {
        let events = Events::default();
        let lifecycle = Lifecycle::new(db, events.clone());
        lifecycle.reconcile().await?;
        Ok(Self { lifecycle, events })
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        self.lifecycle.db()
    }
}
