//! What the lifecycle's use cases fail with, in the domain's own words:
//! the HTTP and MCP adapters map each variant to their status or tool error.

use crate::auth::AgentOnly;

/// Everything a use case can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input is invalid; the message names the field.
    #[error("{0}")]
    Invalid(String),
    /// No such thing, or not the caller's to see: the two are the same (A3).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The caller is known but may not do this.
    #[error("{0}")]
    Forbidden(&'static str),
    /// The thing's state forbids it (no longer active, session ended).
    #[error("{0}")]
    Conflict(&'static str),
    /// The answer was claimed but no target accepted it; the claim was
    /// rolled back and the bundle is answerable again (R7a).
    #[error("the answer could not be delivered to the agent; the question is still open")]
    Undelivered,
    /// The caller (a user, with their agents) holds as many of something
    /// as they may; the message names the limit (issue 26).
    #[error("{0}")]
    TooMany(String),
    /// The caller (a user, with their agents) asks faster than they may;
    /// one more ask is allowed after `retry_after` (issue 45 item 7-P4).
    #[error("{why}; retry in {} s", retry_after.as_secs().max(1))]
    TooFast {
        /// The limit, named.
        why: String,
        /// When to try again.
        retry_after: std::time::Duration,
    },
    /// The database failed; logged by whoever answers, never shown.
    #[error("internal error")]
    Database(#[source] sqlx::Error),
}

/// What use cases return.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        // PostgreSQL refuses U+0000 in text (22021) and in JSON (22P05): a
        // request that smuggled one past the body check (in a path, or an
        // MCP argument) is the caller's mistake, not the server's.
        if let sqlx::Error::Database(db) = &error
            && matches!(db.code().as_deref(), Some("22021" | "22P05"))
        {
            return Self::Invalid("text may not contain the NUL character (U+0000)".to_owned());
        }
        Self::Database(error)
    }
}

impl From<AgentOnly> for Error {
    fn from(_: AgentOnly) -> Self {
        Self::Forbidden("agent tokens can only ask and wait")
    }
}
