//! What `GET /clarification/{id}` says of a bundle (`BundleView.status`):
//! a status, or `superseded`, or a stored status this version does not
//! know, kept as read (D3, D4).

use alloc::string::String;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::status::{BundleStatus, SUPERSEDED, Status};

/// A bundle's status as one read shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewStatus {
    /// A status this version knows: `pending` while it may be answered,
    /// the winner's (`answered`, `rejected`), or why it closed unanswered.
    Known(Status),
    /// A newer turn took its place (D4): stored `pending`, but nobody can
    /// answer it any more.
    Superseded,
    /// A stored status this version does not know, as read.
    Unknown(String),
}

impl ViewStatus {
    /// The wire spelling.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(status) => status.as_str(),
            Self::Superseded => SUPERSEDED,
            Self::Unknown(text) => text,
        }
    }

    /// Reads the wire spelling.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match (Status::parse(text), text) {
            (Some(status), _) => Self::Known(status),
            (None, SUPERSEDED) => Self::Superseded,
            (None, other) => Self::Unknown(other.into()),
        }
    }

    /// How an inactive bundle without a winner shows its first stored
    /// status that is not pending; `superseded` when every one still is.
    #[must_use]
    pub fn closed(stored: Option<&BundleStatus>) -> Self {
        match stored {
            Some(BundleStatus::Known(status)) => Self::Known(*status),
            Some(BundleStatus::Unknown(text)) => Self::Unknown(text.clone()),
            Some(BundleStatus::Absent) | None => Self::Superseded,
        }
    }
}

impl From<Status> for ViewStatus {
    fn from(status: Status) -> Self {
        Self::Known(status)
    }
}

impl PartialEq<Status> for ViewStatus {
    fn eq(&self, other: &Status) -> bool {
        *self == Self::Known(*other)
    }
}

impl Serialize for ViewStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ViewStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Self::parse(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for text in [
            "pending",
            "answered",
            "rejected",
            "cancelled",
            "expired",
            "responding",
        ] {
            let status = ViewStatus::parse(text);
            assert!(matches!(status, ViewStatus::Known(_)), "{text}");
            assert_eq!(serde_json::to_value(&status).unwrap(), text);
        }
        assert_eq!(ViewStatus::parse("superseded"), ViewStatus::Superseded);
        let unknown: ViewStatus = serde_json::from_value(serde_json::json!("snoozed")).unwrap();
        assert_eq!(unknown, ViewStatus::Unknown("snoozed".into()));
        assert_eq!(serde_json::to_value(&unknown).unwrap(), "snoozed");
    }

    #[test]
    fn a_closed_bundle_shows_why() {
        assert_eq!(ViewStatus::closed(None), ViewStatus::Superseded);
        let cancelled = BundleStatus::from(Status::Cancelled);
        assert_eq!(ViewStatus::closed(Some(&cancelled)), Status::Cancelled);
    }
}
