//! Browser events, published only once what they announce is durable.

use serde_json::json;

use super::{Lifecycle, Result};
use crate::db::clarification as repo;
use crate::db::messages::{self, Message};

impl Lifecycle {
    pub(super) async fn publish_bundle(&self, pending_id: &str) -> Result<()> {
        let Some(bundle) = repo::load(self.db.pool(), pending_id).await? else {
            return Ok(());
        };
        let mut updated = Vec::with_capacity(bundle.rows.len());
        for row in &bundle.rows {
            updated.extend(messages::get(self.db.pool(), &row.id).await?);
        }
        self.publish_messages("session.message.updated", bundle.session_id(), &updated)
            .await
    }

    /// Publishes message events, each carrying its session's pending action
    /// as it stands now (`"clarification"` or `null`).
    pub(super) async fn publish_messages(
        &self,
        action: &'static str,
        session_id: &str,
        list: &[Message],
    ) -> Result<()> {
        let waiting = !repo::active_in_session(self.db.pool(), session_id)
            .await?
            .is_empty();
        let pending_action = waiting.then_some("clarification");
        for message in list {
            let mut payload = json!(message);
            payload["pending_action"] = json!(pending_action);
            self.events.publish(action, payload);
        }
        Ok(())
    }

    pub(super) async fn publish_session(&self, session_id: &str, task_id: &str) {
        self.events.publish(
            "task.updated",
            json!({"task_id": task_id, "session_id": session_id}),
        );
    }
}
