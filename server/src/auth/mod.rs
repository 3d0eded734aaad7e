//! Who is calling and what they may see (A1–A9, "Permissions", L1c).
//!
//! With auth off every caller is unscoped and sees everything (A4). With auth
//! on a caller is a user (personal access token or browser cookie) who sees
//! the workspaces they own or that have no owner, plus tasks without a
//! workspace or with a dangling one (L1c); or an agent, who sees its own
//! session's questions only.

pub mod identify;
pub mod tokens;

use crate::db::clarification::Bundle;
use crate::db::{Db, sessions, visibility};

/// The identity a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// No identity, or auth is off: authorized for everything (A4).
    Unscoped,
    /// A user, by id.
    User(String),
    /// An agent, by the session its token belongs to.
    Agent {
        /// The agent's session.
        session_id: String,
        /// The user whose request created that session (`""` when auth
        /// was off, or the session predates the record): the agent's
        /// connections count against that user's quotas (issue 26).
        creator: String,
    },
}

impl Caller {
    /// Whether this caller speaks for the agent that asked a bundle it may
    /// see: an agent token (only ever authorized for its own session's
    /// bundles) or, with auth off, the machine's one user. Only such a
    /// caller's wait takes the delivery of an answer.
    #[must_use]
    pub fn is_asking_agent(&self) -> bool {
        matches!(self, Self::Agent { .. } | Self::Unscoped)
    }

    /// Whom this caller's connections, waits and sessions count against
    /// (issue 26, item 5): a user, together with the agents of every
    /// session that user created, so minting agent tokens buys no more
    /// room; the one user of a server without auth (or an agent of a
    /// session created then) is `"unscoped"`.
    #[must_use]
    pub fn holder(&self) -> String {
        match self {
            Self::User(id) => format!("user:{id}"),
            Self::Agent { creator, .. } if !creator.is_empty() => format!("user:{creator}"),
            Self::Unscoped | Self::Agent { .. } => "unscoped".to_owned(),
        }
    }

    /// The user whose visibility applies to a person's request: `None` for
    /// an unscoped caller, the user's id otherwise. Agent tokens only ask
    /// and wait, so they get [`AgentOnly`].
    ///
    /// # Errors
    /// [`AgentOnly`] for an agent.
    pub fn person(&self) -> Result<Option<&str>, AgentOnly> {
        match self {
            Self::Unscoped => Ok(None),
            Self::User(id) => Ok(Some(id)),
            Self::Agent { .. } => Err(AgentOnly),
        }
    }
}

/// An agent token used where a person's token is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("agent tokens can only ask and wait")]
pub struct AgentOnly;

/// Whether `caller` may see task `task_id` (A1, A2: the M5-resolved task).
///
/// # Errors
/// Database errors.
pub async fn may_access_task(db: &Db, caller: &Caller, task_id: &str) -> sqlx::Result<bool> {
    match caller {
        Caller::Unscoped => Ok(true),
        Caller::Agent { session_id, .. } => Ok(sessions::get(db.pool(), session_id)
            .await?
            .is_some_and(|s| s.task_id == task_id)),
        Caller::User(user_id) => {
            if task_id.is_empty() {
                return Ok(false);
            }
            visibility::task_visible_to(db.pool(), task_id, user_id).await
        }
    }
}

/// Whether `caller` may see a bundle: authorized from its durable rows (M5,
/// A8). A bundle whose task cannot be resolved is hidden from every scoped
/// caller (M5a).
///
/// # Errors
/// Database errors.
pub async fn may_access_bundle(db: &Db, caller: &Caller, bundle: &Bundle) -> sqlx::Result<bool> {
    match caller {
        Caller::Unscoped => Ok(true),
        Caller::Agent { session_id, .. } => Ok(bundle.session_id() == session_id),
        Caller::User(_) => may_access_task(db, caller, bundle.task_id()).await,
    }
}

/// The user id to record as owner of what `caller` creates (`""` unscoped).
#[must_use]
pub fn owner_id(caller: &Caller) -> &str {
    match caller {
        Caller::User(id) => id,
        Caller::Unscoped | Caller::Agent { .. } => "",
    }
}
