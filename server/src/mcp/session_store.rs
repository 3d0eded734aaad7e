//! MCP sessions kept in the shared database, so a client's requests may
//! reach any replica: one that has not seen the session restores it from
//! here instead of answering 404 (rmcp's cross-instance recovery).

use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::clock::now_micros;
use crate::db::{Db, replicas};

/// The session store of one MCP surface of a replica; used only when
/// replicas share PostgreSQL.
#[derive(Debug, Clone)]
pub struct SharedSessions {
    db: Db,
    surface: &'static str,
}

impl SharedSessions {
    /// The sessions of `surface` (`mcp` or `agent`) stored in `db`: a
    /// session opened on one surface is never restored on the other.
    #[must_use]
    pub fn new(db: Db, surface: &'static str) -> Self {
        Self { db, surface }
    }

    fn key(&self, session_id: &str) -> String {
        format!("{}:{session_id}", self.surface)
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        match replicas::mcp_session(self.db.pool(), &self.key(session_id)).await? {
            Some(state) => Ok(Some(serde_json::from_str(&state)?)),
            None => Ok(None),
        }
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        replicas::store_mcp_session(self.db.pool(), &self.key(session_id), &state, now_micros())
            .await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        replicas::delete_mcp_session(self.db.pool(), &self.key(session_id)).await?;
        Ok(())
    }
}
