//! Notices for the people following the queue (`GET /pending/stream`): a
//! bundle started waiting, or stopped, made from the events the lifecycle
//! already publishes, with what a reader needs (task, questions, link, who
//! answered). The operator webhooks (`notify`) send the same notices.

use clarify_core::api::{Event, MessageEvent, Notice, NoticeKind, Payload};
use clarify_core::{ClarificationMetadata, EventKind, MessageKind, Status};

use super::discovery::PendingArgs;
use super::{Reading, Resolving, Result, Shared};
use crate::auth::Caller;
use crate::db::clarification::{self as repo, Bundle};
use crate::db::tasks;

/// The `client` of an answer through a link the stream carried.
const STREAM_CLIENT: &str = "stream";

/// What a message event says about its bundle (its `pending_id` and the
/// change), if anything a follower cares for.
pub(super) fn change_of(action: EventKind, event: &MessageEvent) -> Option<(String, NoticeKind)> {
    if event.message.kind != MessageKind::ClarificationRequest.as_str() {
        return None;
    }
    let metadata = ClarificationMetadata::from_json(&event.message.metadata);
    // One notice per bundle: its first question's message stands for it.
    if metadata.question_index != 0 || metadata.pending_id.is_empty() {
        return None;
    }
    let change = match (action, metadata.status.known()) {
        (EventKind::MessageAdded, _) => NoticeKind::Waiting,
        (EventKind::MessageUpdated, Some(Status::Answered | Status::Rejected)) => {
            NoticeKind::Resolved
        }
        (EventKind::MessageUpdated, Some(Status::Expired)) => NoticeKind::Expired,
        (EventKind::MessageUpdated, Some(Status::Cancelled)) => NoticeKind::Cancelled,
        _ => return None,
    };
    Some((metadata.pending_id, change))
}

impl Reading {
    /// The notice `event` makes, for a reader at `base` (the server's URL
    /// as the reader reached it); `None` for events about anything else.
    /// The caller has already been found to see the event's task.
    ///
    /// # Errors
    /// Database errors.
    pub async fn notice_of(&self, event: &Event, base: &str) -> Result<Option<Notice>> {
        let Payload::Message(message) = &event.payload else {
            return Ok(None);
        };
        let Some((pending_id, change)) = change_of(event.action, message) else {
            return Ok(None);
        };
        let Some(bundle) = repo::load(self.shared.db.pool(), &pending_id).await? else {
            return Ok(None);
        };
        Ok(Some(self.streamed_notice(&bundle, change, base).await?))
    }

    /// A `waiting` notice for each bundle `caller` may answer now, oldest
    /// first (the first 200): where a follower starts from.
    ///
    /// # Errors
    /// As [`Reading::list_pending`].
    pub async fn waiting_notices(&self, caller: &Caller, base: &str) -> Result<Vec<Notice>> {
        let args = PendingArgs {
            limit: Some(200),
            ..PendingArgs::default()
        };
        let page = self.list_pending(caller, &args).await?;
        let mut notices = Vec::with_capacity(page.bundles.len());
        for listed in page.bundles {
            if let Some(bundle) = repo::load(self.shared.db.pool(), &listed.pending_id).await? {
                notices.push(
                    self.streamed_notice(&bundle, NoticeKind::Waiting, base)
                        .await?,
                );
            }
        }
        Ok(notices)
    }

    /// A notice for the stream, whose answer links record `stream`.
    async fn streamed_notice(
        &self,
        bundle: &Bundle,
        change: NoticeKind,
        base: &str,
    ) -> Result<Notice> {
        let mut notice = self.shared.notice(bundle, change, base).await?;
        // A bundle whose links are used up costs the stream no write
        // transaction (a follower reconnecting in a loop must not take
        // SQLite's writer again and again): looked at on the read pool.
        if super::answer_link::wants_links(bundle, change)
            && super::answer_link::room_for_links(self.shared.db.pool(), bundle.pending_id())
                .await?
        {
            let mut tx = self.shared.db.begin_write().await?;
            Resolving::add_links(&mut tx, bundle, &mut notice, base, STREAM_CLIENT).await?;
            tx.commit().await?;
        }
        Ok(notice)
    }
}

impl Shared {
    pub(super) async fn notice(
        &self,
        bundle: &Bundle,
        change: NoticeKind,
        base: &str,
    ) -> Result<Notice> {
        let task = tasks::get(self.db.pool(), bundle.task_id())
            .await?
            .map(|t| t.title)
            .unwrap_or_default();
        let answered_by = bundle.answered_by();
        let mut notice = Notice {
            event: change,
            text: String::new(),
            pending_id: bundle.pending_id().to_owned(),
            task_id: bundle.task_id().to_owned(),
            task,
            session_id: bundle.session_id().to_owned(),
            questions: bundle
                .messages
                .iter()
                .map(|m| m.metadata.question.prompt.clone())
                .collect(),
            url: format!("{base}/t/{}", bundle.task_id()),
            answered_by,
            expires_at: super::expiry::expires_at_text(bundle),
            actions: Vec::new(),
            assignee: clarify_core::stored::bundle_assignee(&bundle.messages).to_owned(),
            tool_call: clarify_core::approval::bundle_tool_call(&bundle.messages).cloned(),
        };
        notice.text = notice.describe();
        Ok(notice)
    }
}
