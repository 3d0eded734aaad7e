//! Who is calling and what they may see (A1–A9, "Permissions", L1c).
//!
//! With auth off every caller is unscoped and sees everything (A4). With auth
//! on a caller is a user (personal access token or browser cookie) who sees
//! the workspaces they own or that have no owner, plus tasks without a
//! workspace or with a dangling one (L1c); or an agent, who sees its own
//! session's questions only.

pub mod identify;
pub mod seal;
pub mod tokens;

use clarify_core::{SessionId, UserId};

use crate::db::clarification::Bundle;
use crate::db::{Db, sessions, visibility};

/// The identity a request carries, resolved once per request by the
/// identity layer ([`identify::identify`]) and never again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Auth is off and the request carries no agent token: authorized for
    /// everything (A4), and nobody in particular.
    Unscoped,
    /// A user, by id.
    User(UserId),
    /// An agent, by its session's token, with auth on or off.
    Agent(Agent),
}

/// An agent: the session its token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The agent's session.
    pub session_id: SessionId,
    /// The user whose request created that session (`None` when auth was
    /// off, or the session predates the record): the agent's connections
    /// count against that user's quotas (issue 26).
    pub creator: Option<UserId>,
    /// Auth is on: the agent sees its own session's questions only. With
    /// auth off it is authorized for everything like any caller (A4: no
    /// caller is newly denied), but still known, so only it takes the
    /// delivery of its own bundles' answers.
    pub scoped: bool,
}

impl Caller {
    /// The agent this caller is, if it carried a valid agent token.
    #[must_use]
    pub fn agent(&self) -> Option<&Agent> {
        match self {
            Self::Agent(agent) => Some(agent),
            Self::Unscoped | Self::User(_) => None,
        }
    }

    /// Authorized for everything (A4): auth is off, whoever is calling.
    #[must_use]
    pub fn sees_everything(&self) -> bool {
        match self {
            Self::Unscoped => true,
            Self::Agent(agent) => !agent.scoped,
            Self::User(_) => false,
        }
    }

    /// Whether this caller is the agent that asked in `session_id`: only
    /// that session's agent token is (its reads collect an answer kept for
    /// it; for waits see [`Caller::waiter`]).
    #[must_use]
    pub fn is_asking_agent(&self, session_id: &str) -> bool {
        self.agent().is_some_and(|a| a.session_id == session_id)
    }

    /// Who this caller is to a bundle of `session_id`, for delivery
    /// ([`clarify_core::delivery::attaches`] decides who takes it): the
    /// session's own agent token is the asking agent; with auth off, a
    /// caller with no token at all is the local user (A4); anyone else is a
    /// reader.
    #[must_use]
    pub fn waiter(&self, session_id: &str) -> clarify_core::delivery::Waiter {
        use clarify_core::delivery::Waiter;
        match self {
            Self::Unscoped => Waiter::LocalUser,
            _ if self.is_asking_agent(session_id) => Waiter::AskingAgent,
            _ => Waiter::Reader,
        }
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
            Self::Agent(Agent {
                creator: Some(creator),
                ..
            }) => format!("user:{creator}"),
            Self::Unscoped | Self::Agent(_) => "unscoped".to_owned(),
        }
    }

    /// The user whose visibility applies to a person's request: `None` for
    /// a caller who sees everything, the user's id otherwise. Agent tokens
    /// only ask and wait, so with auth on they get [`AgentOnly`].
    ///
    /// # Errors
    /// [`AgentOnly`] for an agent under auth.
    pub fn person(&self) -> Result<Option<&str>, AgentOnly> {
        match self {
            Self::User(id) => Ok(Some(id)),
            _ if self.sees_everything() => Ok(None),
            Self::Unscoped | Self::Agent(_) => Err(AgentOnly),
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
    if caller.sees_everything() {
        return Ok(true);
    }
    match caller {
        Caller::Unscoped => Ok(true),
        Caller::Agent(agent) => Ok(sessions::get(db.pool(), &agent.session_id)
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
    if caller.sees_everything() {
        return Ok(true);
    }
    match caller {
        Caller::Unscoped => Ok(true),
        Caller::Agent(agent) => Ok(bundle.session_id() == agent.session_id),
        // M5a: a bundle whose task cannot be resolved is nobody's to see.
        Caller::User(_) => match bundle.task() {
            Some(task_id) => may_access_task(db, caller, task_id).await,
            None => Ok(false),
        },
    }
}

/// The user to record as owner of what `caller` creates: none unless a
/// user is calling.
#[must_use]
pub fn owner_id(caller: &Caller) -> Option<&UserId> {
    match caller {
        Caller::User(id) => Some(id),
        Caller::Unscoped | Caller::Agent(_) => None,
    }
}
