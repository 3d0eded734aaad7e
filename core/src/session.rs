//! Session states (DESIGN.md "Statuses") and the one rule for what a
//! session or task is waiting on a person for (T1, T2).

use core::fmt;

use serde::{Deserialize, Serialize};

/// The state of an agent session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionState {
    /// Created, not yet started.
    Created,
    /// Starting up.
    Starting,
    /// Working.
    Running,
    /// Idle between prompts.
    Idle,
    /// Blocked on a question to a person.
    WaitingForInput,
    /// Finished (terminal).
    Completed,
    /// Failed (terminal).
    Failed,
    /// Cancelled (terminal).
    Cancelled,
}

impl SessionState {
    /// Every state, in the order DESIGN.md lists them.
    pub const ALL: [Self; 8] = [
        Self::Created,
        Self::Starting,
        Self::Running,
        Self::Idle,
        Self::WaitingForInput,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

    /// The wire (and stored) spelling.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Created => "CREATED",
            Self::Starting => "STARTING",
            Self::Running => "RUNNING",
            Self::Idle => "IDLE",
            Self::WaitingForInput => "WAITING_FOR_INPUT",
            Self::Completed => "COMPLETED",
            Self::Failed => "FAILED",
            Self::Cancelled => "CANCELLED",
        }
    }

    /// Parses the wire spelling.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Whether the session has ended: its active bundles expire, and none
    /// can be asked on it (D4).
    #[must_use]
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// Whether a person's answer can be taken up now (T1): the agent is
    /// working or waiting for input.
    #[must_use]
    pub const fn is_input_capable(self) -> bool {
        matches!(self, Self::Running | Self::WaitingForInput)
    }
}

impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no session state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "state: must be one of CREATED, STARTING, RUNNING, IDLE, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED"
)]
pub struct UnknownState;

impl core::str::FromStr for SessionState {
    type Err = UnknownState;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text).ok_or(UnknownState)
    }
}

impl TryFrom<alloc::string::String> for SessionState {
    type Error = UnknownState;

    fn try_from(text: alloc::string::String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

/// What a session or task waits on a person for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PendingAction {
    /// A clarification bundle awaits an answer.
    Clarification,
}

/// The one rule (T1): a session waits on a person when it can take an
/// answer up now (RUNNING or WAITING_FOR_INPUT) and has an active bundle.
/// Tasks, session lists and message events all use it.
#[must_use]
pub fn pending_action(state: SessionState, has_active_bundle: bool) -> Option<PendingAction> {
    (state.is_input_capable() && has_active_bundle).then_some(PendingAction::Clarification)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_round_trips_and_three_are_terminal() {
        for state in SessionState::ALL {
            assert_eq!(SessionState::parse(state.as_str()), Some(state));
            let json = serde_json::to_string(&state).unwrap();
            assert_eq!(json, alloc::format!("\"{}\"", state.as_str()));
        }
        let terminal: alloc::vec::Vec<_> = SessionState::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                SessionState::Completed,
                SessionState::Failed,
                SessionState::Cancelled
            ]
        );
        assert_eq!(SessionState::parse("running"), None);
    }

    #[test]
    fn t1_only_input_capable_sessions_with_an_active_bundle_wait() {
        for state in SessionState::ALL {
            let expected = matches!(state, SessionState::Running | SessionState::WaitingForInput);
            assert_eq!(pending_action(state, true).is_some(), expected, "{state}");
            assert_eq!(pending_action(state, false), None, "{state}");
        }
    }
}
