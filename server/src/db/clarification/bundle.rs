//! A bundle as read: its rows in D2 order, their core view, and the
//! questions every caller asks of a bundle (its id, its winner, whether its
//! agent detached, whether its answer waits for pickup), answered once.

use clarify_core::{AnsweredBy, ClarificationMetadata, StoredMessage, Winner, sort_d2, winner};

/// One stored question of a bundle, with where it lives (M5).
#[derive(Debug, Clone)]
pub struct BundleRow {
    /// The message id.
    pub id: String,
    /// The bundle it belongs to.
    pub pending_id: String,
    /// The session that asked.
    pub session_id: String,
    /// The task, from the message or else from its session (M5); `""` when
    /// neither has one (M5a).
    pub task_id: String,
    /// The turn it was asked in.
    pub turn_id: String,
    /// Raw metadata JSON.
    pub metadata: String,
    /// When it was written.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
}

crate::db::row::from_row!(BundleRow {
    id,
    pending_id,
    session_id,
    task_id,
    turn_id,
    metadata,
    created_at,
    updated_at
});

impl BundleRow {
    /// The core view of this row.
    #[must_use]
    pub fn stored(&self) -> StoredMessage {
        let value = serde_json::from_str(&self.metadata).unwrap_or(serde_json::Value::Null);
        StoredMessage {
            id: self.id.clone(),
            created_at: self.created_at,
            metadata: ClarificationMetadata::from_json(&value),
        }
    }
}

/// A bundle's rows in D2 order.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The rows, D2-ordered.
    pub rows: Vec<BundleRow>,
    /// Their core view, in the same order.
    pub messages: Vec<StoredMessage>,
}

impl Bundle {
    pub(super) fn new(rows: Vec<BundleRow>) -> Option<Self> {
        if rows.is_empty() {
            return None;
        }
        let mut pairs: Vec<(StoredMessage, BundleRow)> =
            rows.into_iter().map(|r| (r.stored(), r)).collect();
        let mut messages: Vec<StoredMessage> = pairs.iter().map(|(m, _)| m.clone()).collect();
        sort_d2(&mut messages);
        pairs.sort_by_key(|(m, _)| messages.iter().position(|x| x.id == m.id));
        Some(Self {
            rows: pairs.into_iter().map(|(_, r)| r).collect(),
            messages,
        })
    }

    /// The session that asked.
    #[must_use]
    pub fn session_id(&self) -> &str {
        &self.rows[0].session_id
    }

    /// The task it blocks (M5), `None` when unresolvable (M5a).
    #[must_use]
    pub fn task(&self) -> Option<&str> {
        self.rows
            .iter()
            .map(|r| r.task_id.as_str())
            .find(|t| !t.is_empty())
    }

    /// [`Bundle::task`] as the wire writes it: `""` when unresolvable.
    #[must_use]
    pub fn task_id(&self) -> &str {
        self.task().unwrap_or_default()
    }

    /// The newest `updated_at` of its rows: when it was resolved, once it is.
    #[must_use]
    pub fn updated_at(&self) -> i64 {
        self.rows
            .iter()
            .map(|r| r.updated_at)
            .max()
            .unwrap_or_default()
    }

    /// The bundle's id.
    #[must_use]
    pub fn pending_id(&self) -> &str {
        // The column, not the metadata: it is what the bundle was read by.
        &self.rows[0].pending_id
    }

    /// The winner (R2b), if it has been answered or rejected.
    #[must_use]
    pub fn winner(&self) -> Option<Winner> {
        winner(&self.messages)
    }

    /// Who won it and how, once it has a winner.
    #[must_use]
    pub fn answered_by(&self) -> Option<AnsweredBy> {
        self.winner()?;
        self.messages
            .iter()
            .find_map(|m| m.metadata.answered_by.clone())
    }

    /// The agent stopped waiting on it (detached); it stays answerable.
    #[must_use]
    pub fn detached(&self) -> bool {
        self.messages.iter().any(|m| m.metadata.agent_disconnected)
    }

    /// Its answer is kept for its agent to collect (pull delivery).
    #[must_use]
    pub fn awaits_pickup(&self) -> bool {
        self.messages
            .iter()
            .any(|m| m.metadata.response_delivery_pending && m.metadata.awaiting_pickup)
    }

    /// A claim of it is made and its delivery not yet confirmed (R6).
    #[must_use]
    pub fn delivery_pending(&self) -> bool {
        self.messages
            .iter()
            .any(|m| m.metadata.response_delivery_pending)
    }

    /// Its delivery's flags as stored, for the delivery machine
    /// ([`clarify_core::delivery::State::from_flags`]).
    #[must_use]
    pub fn delivery_flags(&self) -> clarify_core::delivery::Flags {
        clarify_core::delivery::Flags {
            won: self.winner().is_some(),
            delivery_pending: self.delivery_pending(),
            resume_attempted: self.messages.iter().any(|m| m.metadata.resume_attempted),
            awaiting_pickup: self.awaits_pickup(),
        }
    }

    /// When it expires unanswered (microseconds), `None` for never: the
    /// stored `0` read once, here.
    #[must_use]
    pub fn expires_at(&self) -> Option<i64> {
        self.messages
            .iter()
            .map(|m| m.metadata.expires_at)
            .filter(|at| *at > 0)
            .min()
    }

    /// Its earliest `created_at` (D1).
    #[must_use]
    pub fn created_at(&self) -> i64 {
        self.rows
            .iter()
            .map(|r| r.created_at)
            .min()
            .unwrap_or_default()
    }
}
