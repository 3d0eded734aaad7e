//! The read side of the external surface: pending questions (L1–L16), tasks
//! with their pending actions (T1, T2) and task conversations, each scoped
//! to the caller.

use clarify_core::listing::{BundleIdentity, age_seconds, clamp_limit};
use clarify_core::{Cursor, ListError, PendingBundle, PendingPage, api};
use serde::Serialize;

use super::projection::task_views;
use super::{Error, Reading, Result};
use crate::auth::{self, Caller};
use crate::clock::{self, now_micros};
use crate::db::clarification as repo;
use crate::db::pending::{self, PendingQuery};
use crate::db::tasks;
use crate::db::{messages, page};

/// Arguments of `list_pending_questions_kandev`.
#[derive(Debug, Clone, Default)]
pub struct PendingArgs {
    /// Only this workspace; `""` means not given (L7a.4).
    pub workspace_id: String,
    /// RFC 3339 lower bound on `created_at` (L8).
    pub created_since: String,
    /// The `next_cursor` of a previous page (L9).
    pub cursor: String,
    /// Page size (L10).
    pub limit: Option<i64>,
}

/// One page of a conversation.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationPage {
    /// The task.
    pub task_id: String,
    /// Its messages, oldest first, across its sessions.
    pub messages: Vec<api::Message>,
    /// `messages.len()`.
    pub count: usize,
    /// The cursor for the next page; `""` when none.
    pub next_cursor: String,
}

impl Reading {
    /// `list_pending_questions_kandev`: every active bundle the caller may
    /// see, oldest first, keyset-paged.
    ///
    /// # Errors
    /// 400 naming `cursor` or `created_since` when unparseable (L13).
    pub async fn list_pending(&self, caller: &Caller, args: &PendingArgs) -> Result<PendingPage> {
        let user = caller.person()?;
        let created_since = match args.created_since.trim() {
            "" => None,
            text => Some(
                clock::parse_rfc3339(text)
                    .ok_or_else(|| Error::Invalid(ListError::InvalidCreatedSince.to_string()))?,
            ),
        };
        let after = super::cursor(args.cursor.trim())?;
        let workspace_id = Some(args.workspace_id.trim()).filter(|w| !w.is_empty());
        let query = PendingQuery {
            user,
            workspace_id,
            created_since,
            after: after.as_ref(),
            limit: clamp_limit(args.limit),
        };
        let (keys, more) =
            pending::page(self.shared.db.pool(), self.shared.db.backend(), &query).await?;
        let now = now_micros();
        let ids: Vec<String> = keys.iter().map(|k| k.pending_id.clone()).collect();
        let mut loaded = repo::load_many(self.shared.db.pool(), &ids).await?;
        let mut bundles = Vec::with_capacity(keys.len());
        for key in &keys {
            let Some(bundle) = loaded.remove(&key.pending_id) else {
                continue;
            };
            let mut listed = PendingBundle::from_messages(
                BundleIdentity {
                    pending_id: key.pending_id.clone(),
                    task_id: key.task_id.clone(),
                    session_id: bundle.session_id().to_owned(),
                },
                clock::rfc3339(key.created_at),
                age_seconds(now, key.created_at),
                &bundle.messages,
            );
            listed.expires_at = super::expiry::expires_at_text(&bundle);
            bundles.push(listed);
        }
        let next = more.then(|| keys.last()).flatten().map(|k| Cursor {
            created_at: k.created_at,
            id: k.pending_id.clone(),
        });
        Ok(PendingPage::new(bundles, next.as_ref()))
    }

    /// `list_tasks_kandev`: the caller's tasks (of one workspace, if given)
    /// with their pending actions, projected in two queries.
    ///
    /// # Errors
    /// Database errors.
    pub async fn list_tasks(
        &self,
        caller: &Caller,
        workspace_id: &str,
    ) -> Result<Vec<api::TaskView>> {
        let user = caller.person()?;
        let workspace_id = Some(workspace_id.trim()).filter(|w| !w.is_empty());
        let list = tasks::list_visible(self.shared.db.pool(), user, workspace_id).await?;
        Ok(task_views(&self.shared.db, list).await?)
    }

    /// `GET /tasks`: a page of the caller's tasks, oldest first, with their
    /// pending actions (T1, T2); `next_cursor` continues, `""` at the end.
    ///
    /// # Errors
    /// 400 naming `cursor` when it is not one this server issued.
    pub async fn tasks_page(
        &self,
        caller: &Caller,
        filter: tasks::TaskFilter<'_>,
        cursor_text: &str,
        limit: Option<i64>,
    ) -> Result<api::Tasks> {
        let user = caller.person()?;
        let filter = tasks::TaskFilter {
            workspace_id: filter.workspace_id.map(str::trim).filter(|w| !w.is_empty()),
            ..filter
        };
        let after = super::cursor(cursor_text.trim())?;
        let (page, more) = tasks::page_filtered(
            self.shared.db.pool(),
            user,
            filter,
            after.as_ref(),
            clamp_limit(limit),
        )
        .await?;
        let next_cursor = page
            .last()
            .filter(|_| more)
            .map(|t| {
                Cursor {
                    created_at: t.created_at,
                    id: t.id.clone(),
                }
                .encode()
            })
            .unwrap_or_default();
        Ok(api::Tasks {
            tasks: task_views(&self.shared.db, page).await?,
            next_cursor,
        })
    }

    /// `get_task_conversation_kandev`: a page of a task's transcript.
    ///
    /// # Errors
    /// 404 for a task the caller may not see; 400 for a bad cursor.
    pub async fn conversation(
        &self,
        caller: &Caller,
        task_id: &str,
        cursor_text: &str,
        limit: Option<i64>,
    ) -> Result<ConversationPage> {
        caller.person()?;
        let exists = tasks::get(self.shared.db.pool(), task_id).await?.is_some();
        if !exists || !auth::may_access_task(&self.shared.db, caller, task_id).await? {
            return Err(Error::NotFound("task"));
        }
        let after = super::cursor(cursor_text.trim())?;
        let (messages, more) = messages::for_task_page(
            self.shared.db.pool(),
            task_id,
            after.as_ref(),
            clamp_limit(limit),
        )
        .await?;
        let next_cursor = page::next_cursor(&messages, more, |m| (m.created_at, m.id.clone()));
        Ok(ConversationPage {
            task_id: task_id.to_owned(),
            count: messages.len(),
            messages: messages.into_iter().map(Into::into).collect(),
            next_cursor,
        })
    }
}
