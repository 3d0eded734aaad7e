//! Browser events, published only once what they announce is durable; the
//! notices they make are queued from here too (`outbox`).

use clarify_core::api::{self, Payload, TaskChange};
use clarify_core::{EventKind, pending_action};

use super::{Result, Shared};
use crate::db::messages::{self, Message};
use crate::db::publishing;

impl Shared {
    pub(super) async fn publish_bundle(&self, pending_id: &str) -> Result<()> {
        let updated = messages::of_bundle(self.db.pool(), pending_id).await?;
        let Some(session_id) = updated.first().map(|m| m.task_session_id.clone()) else {
            return Ok(());
        };
        self.publish_messages(EventKind::MessageUpdated, &session_id, &updated)
            .await
    }

    /// Publishes message events, each carrying its session's pending action
    /// as it stands now (`"clarification"` or `null`, by the one rule, T1).
    pub(super) async fn publish_messages(
        &self,
        kind: EventKind,
        session_id: &str,
        list: &[Message],
    ) -> Result<()> {
        let session = publishing::publishing(self.db.pool(), session_id).await?;
        let pending_action = session
            .as_ref()
            .and_then(|s| pending_action(s.state, s.waiting != 0));
        // The workspace's own targets: its webhook, and its Slack and
        // Discord channels when this server has an app or bot to post with.
        let own: Vec<String> = session
            .map(|s| {
                let slack = s
                    .slack_channel
                    .and_then(|c| self.notifications.slack_target(&c));
                let discord = s
                    .discord_channel
                    .and_then(|c| self.notifications.discord_target(&c));
                s.webhook_url
                    .into_iter()
                    .chain(slack)
                    .chain(discord)
                    .collect()
            })
            .unwrap_or_default();
        for message in list {
            let mut payload = api::MessageEvent {
                message: message.clone().into(),
                pending_action,
            };
            self.notify_change(kind, &payload, &own);
            // For the browser, which renders no Markdown itself.
            crate::markdown::message(&mut payload.message);
            self.events
                .publish(kind, Payload::Message(Box::new(payload)));
        }
        Ok(())
    }

    pub(super) async fn publish_session(&self, session_id: &str, task_id: &str) {
        let change = TaskChange {
            task_id: task_id.to_owned(),
            session_id: session_id.to_owned(),
        };
        self.events
            .publish(EventKind::TaskUpdated, Payload::Task(change));
    }
}
