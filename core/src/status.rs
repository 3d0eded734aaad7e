//! The statuses a clarification message moves through (D3).

use serde::{Deserialize, Serialize};

/// `metadata.status` of a `clarification_request` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Waiting for an answer; an absent status means the same (D3).
    Pending,
    /// Claimed by a caller whose delivery is still in flight (transient).
    Responding,
    /// Answered; the message carries `metadata.response`.
    Answered,
    /// Declined by whoever answered.
    Rejected,
    /// Cancelled by the agent (A9).
    Cancelled,
    /// Its session reached a terminal state before anyone answered.
    Expired,
}

impl Status {
    /// The wire spelling.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Responding => "responding",
            Self::Answered => "answered",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
        }
    }

    /// Parses a stored status; `None` for a value this version does not know.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => Self::Pending,
            "responding" => Self::Responding,
            "answered" => Self::Answered,
            "rejected" => Self::Rejected,
            "cancelled" => Self::Cancelled,
            "expired" => Self::Expired,
            _ => return None,
        })
    }

    /// Whether a stored status string counts as pending for the active rule:
    /// absent or `pending`, and nothing else — an unknown value does not (D3).
    #[must_use]
    pub fn counts_as_pending(stored: &str) -> bool {
        stored.is_empty() || stored == "pending"
    }

    /// The terminal outcomes a claim may write (P1a).
    #[must_use]
    pub const fn is_resolution(self) -> bool {
        matches!(self, Self::Answered | Self::Rejected)
    }
}

impl core::fmt::Display for Status {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_pending_count_as_pending_unknown_does_not() {
        assert!(Status::counts_as_pending(""));
        assert!(Status::counts_as_pending("pending"));
        assert!(!Status::counts_as_pending("answered"));
        assert!(!Status::counts_as_pending("PENDING"));
        assert!(!Status::counts_as_pending("mystery"));
    }

    #[test]
    fn round_trips_every_status() {
        for status in [
            Status::Pending,
            Status::Responding,
            Status::Answered,
            Status::Rejected,
            Status::Cancelled,
            Status::Expired,
        ] {
            assert_eq!(Status::parse(status.as_str()), Some(status));
        }
        assert_eq!(Status::parse("unknown"), None);
    }
}
