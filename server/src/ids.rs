//! Identifiers and secrets: time-ordered ids for rows, random tokens shown
//! once and stored only as a hash.

use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

/// A new row id (UUIDv7: unique and roughly time-ordered, which keeps the
/// D2 id tiebreak close to insertion order).
#[must_use]
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A new secret token with a recognisable prefix (`clk_agent_…`).
#[must_use]
pub fn new_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

/// A new secret of `bytes` random bytes (hex) after `prefix`, for where
/// its length is bounded (a Telegram button's data holds 64 bytes).
#[must_use]
pub fn new_secret_of(prefix: &str, bytes: usize) -> String {
    let mut random = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut random);
    format!("{prefix}{}", hex::encode(random))
}

/// The hash a secret is stored and looked up by; the secret itself is never
/// stored.
#[must_use]
pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A credential the configuration holds: never printed, whoever prints
/// the configuration.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}
