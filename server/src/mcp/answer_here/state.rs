//! The `requestState` of a form round in the 2026-07-28 era (MRTR,
//! SEP-2322): what the server needs to take the client's answers back,
//! carried by the client, so sealed ([`SealKey`]: bound to the caller,
//! expiring) and taken once (issue 30 item 1).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::report::Line;
use crate::auth::seal::SealKey;
use crate::clock::now_micros;
use crate::db::{Db, chat_messages};
use crate::ids::new_id;

/// How long a person has to fill in the forms of one round.
pub const ROUND_TTL: Duration = Duration::from_secs(60 * 60);

/// What a round asked, sealed into its `requestState`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    /// Taken once: a second retry with the same state is refused.
    pub nonce: String,
    /// The bundles asked; the `i`th is input request `b{i}`.
    pub asked: Vec<String>,
    /// Which try this is (a form that could not be sent is asked again).
    pub tries: u8,
    /// What earlier rounds of the same call settled.
    pub done: Vec<Line>,
    /// More bundles wait than the call showed.
    #[serde(default)]
    pub more: bool,
}

impl Round {
    /// A round asking for `shown`'s forms.
    #[must_use]
    pub(super) fn new(shown: &[super::Shown], tries: u8, done: Vec<Line>, more: bool) -> Self {
        Self {
            nonce: new_id(),
            asked: shown.iter().map(|s| s.bundle.pending_id.clone()).collect(),
            tries,
            done,
            more,
        }
    }

    /// The round sealed for `principal`.
    #[must_use]
    pub fn seal(&self, key: &SealKey, principal: &str) -> String {
        key.seal(principal, self, ROUND_TTL)
    }

    /// The round `sealed` carries, if `principal` was given it, it is
    /// intact and unexpired, and it was not taken before (recorded in `db`,
    /// so a replay to another replica is refused too).
    ///
    /// # Errors
    /// [`Refused`].
    pub async fn take(
        key: &SealKey,
        db: &Db,
        principal: &str,
        sealed: &str,
    ) -> Result<Self, Refused> {
        let round: Self = key.open(principal, sealed).map_err(|_| Refused::Invalid)?;
        let now = now_micros();
        let ttl = i64::try_from(ROUND_TTL.as_micros()).unwrap_or(i64::MAX);
        let seen = format!("mcp-round:{}", round.nonce);
        if chat_messages::first_time(db, &seen, now, now.saturating_sub(ttl)).await? {
            Ok(round)
        } else {
            Err(Refused::Replayed)
        }
    }
}

/// Why a `requestState` was refused: said to the client as a tool error.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Altered, forged, expired, or sealed for another caller.
    #[error("requestState: not valid (altered, expired, or another caller's); call the tool again")]
    Invalid,
    /// Its round was taken already.
    #[error("requestState: already used; call the tool again")]
    Replayed,
    /// The database could not record it.
    #[error("internal error")]
    Database(#[from] sqlx::Error),
}
