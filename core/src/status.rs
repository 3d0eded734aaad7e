//! The statuses a clarification message moves through (D3), and the status
//! as stored, which may be absent or unknown to this version.

use alloc::string::String;

use serde::{Deserialize, Serialize};

/// `metadata.status` of a `clarification_request` message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

    /// The terminal outcomes a claim may write (P1a).
    #[must_use]
    pub const fn is_resolution(self) -> bool {
        matches!(self, Self::Answered | Self::Rejected)
    }
}

/// How a reader is told a bundle is gone unanswered because a newer turn
/// took its place (D4): its questions are still stored `pending`, but
/// nobody can answer them any more.
pub const SUPERSEDED: &str = "superseded";

/// A task's last outcome when its newest question took its defaults at
/// expiry: answered in the rows, by nobody (issue 46 item 7).
pub const DEFAULTED: &str = "defaulted";

/// `metadata.status` as stored (D3): absent, a status this version knows,
/// or one it does not — kept as read so a rewrite preserves it, and never
/// counted as pending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BundleStatus {
    /// No status stored; counts as pending (D3).
    #[default]
    Absent,
    /// A status this version knows.
    Known(Status),
    /// A value this version does not know.
    Unknown(String),
}

impl BundleStatus {
    /// Reads a stored value (`None` or `""` when absent).
    #[must_use]
    pub fn read(stored: Option<&str>) -> Self {
        match stored {
            None | Some("") => Self::Absent,
            Some(text) => {
                Status::parse(text).map_or_else(|| Self::Unknown(text.into()), Self::Known)
            }
        }
    }

    /// The stored spelling; `""` when absent.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Absent => "",
            Self::Known(status) => status.as_str(),
            Self::Unknown(text) => text,
        }
    }

    /// Whether it counts as pending for the active rule: absent or
    /// `pending`, and nothing else (D3).
    #[must_use]
    pub fn counts_as_pending(&self) -> bool {
        matches!(self, Self::Absent | Self::Known(Status::Pending))
    }

    /// The known status, if it is one.
    #[must_use]
    pub fn known(&self) -> Option<Status> {
        match self {
            Self::Known(status) => Some(*status),
            Self::Absent | Self::Unknown(_) => None,
        }
    }

    /// As lists show it: `pending` when absent (L4a, L12), else as stored.
    #[must_use]
    pub fn listed(&self) -> &str {
        match self {
            Self::Absent => Status::Pending.as_str(),
            other => other.as_str(),
        }
    }
}

impl From<Status> for BundleStatus {
    fn from(status: Status) -> Self {
        Self::Known(status)
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
        let counts = |stored: Option<&str>| BundleStatus::read(stored).counts_as_pending();
        assert!(counts(None));
        assert!(counts(Some("")));
        assert!(counts(Some("pending")));
        assert!(!counts(Some("answered")));
        assert!(!counts(Some("PENDING")));
        assert!(!counts(Some("mystery")));
    }

    #[test]
    fn an_unknown_status_is_kept_as_read() {
        let unknown = BundleStatus::read(Some("snoozed"));
        assert_eq!(unknown, BundleStatus::Unknown("snoozed".into()));
        assert_eq!(unknown.as_str(), "snoozed");
        assert_eq!(unknown.listed(), "snoozed");
        assert_eq!(BundleStatus::Absent.listed(), "pending");
        assert_eq!(BundleStatus::read(Some("expired")), Status::Expired.into());
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
