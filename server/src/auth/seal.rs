//! State the server hands a client and must trust when it comes back (the
//! MCP `requestState` of issue 30): sealed with HMAC-SHA256 under a key kept
//! in the database, the same on every replica and across restarts, bound to
//! who it was sealed for, and expiring. Signed, not encrypted: readable by
//! whoever holds it, so it carries nothing secret.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{RequestStateCodec, SealOptions};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::clock::now_micros;
use crate::db::{Db, server_keys};
use crate::ids::new_secret_of;

/// The server's sealing key.
#[derive(Clone)]
pub struct SealKey(Arc<RequestStateCodec>);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// A sealed value that is altered, forged, expired, or another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not valid (altered, expired, or sealed for another caller)")]
pub struct Broken;

impl SealKey {
    /// The key stored in `db`, made on first use.
    ///
    /// # Errors
    /// Database errors.
    pub async fn load(db: &Db) -> sqlx::Result<Self> {
        let fresh = new_secret_of("", 32);
        let secret = db
            .write(async |c| server_keys::get_or_insert(c, "seal", &fresh, now_micros()).await)
            .await?;
        let codec = RequestStateCodec::try_new(secret.into_bytes())
            .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
        Ok(Self(Arc::new(codec)))
    }

    /// `value` sealed for `principal`, good for `ttl`.
    ///
    /// # Panics
    /// When `value` cannot be serialized (plain data always can).
    #[must_use]
    pub fn seal<T: Serialize>(&self, principal: &str, value: &T, ttl: Duration) -> String {
        let options = SealOptions::new()
            .associated_data(principal.as_bytes())
            .ttl(ttl);
        self.0
            .seal_json_with(value, &options)
            .expect("plain data serializes")
    }

    /// The value `sealed` carries, if it was sealed for `principal`, is
    /// intact and has not expired.
    ///
    /// # Errors
    /// [`Broken`] otherwise.
    pub fn open<T: DeserializeOwned>(&self, principal: &str, sealed: &str) -> Result<T, Broken> {
        self.0
            .open_json_with(sealed, principal.as_bytes())
            .map_err(|_| Broken)
    }
}
