//! The reply topic (issue 48 item 1): each notify topic has one on the
//! same ntfy server, named `clarify-r-` and 128 bits of an HMAC of the
//! notify topic's URL under a key this server's database keeps. Nobody
//! chooses it, so nothing is to configure; two Clarify servers on one
//! notify topic (a laptop's and a team's) never read each other's replies;
//! and nobody who does not read the notify topic can guess it.

use std::sync::Arc;

use hmac::{KeyInit as _, Mac as _};

use crate::clock::now_micros;
use crate::db::{Db, server_keys};
use crate::ids::new_secret_of;

/// The reply topics' key, kept in `server_keys` (the same on every
/// replica and across restarts).
#[derive(Clone)]
pub struct ReplyKey(Arc<str>);

impl std::fmt::Debug for ReplyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReplyKey(..)")
    }
}

/// A reply topic's name starts so, to be told from anyone else's.
const PREFIX: &str = "clarify-r-";

impl ReplyKey {
    /// The key stored in `db`, made on first use.
    ///
    /// # Errors
    /// Database errors.
    pub async fn load(db: &Db) -> sqlx::Result<Self> {
        let fresh = new_secret_of("", 32);
        let secret = db
            .write(async |c| {
                server_keys::get_or_insert(c, "ntfy_replies", &fresh, now_micros()).await
            })
            .await?;
        Ok(Self(secret.into()))
    }

    /// A key for unit tests.
    #[cfg(test)]
    pub(super) fn of(secret: &str) -> Self {
        Self(secret.into())
    }

    /// The reply topic's name for the notify topic at `topic_url`.
    #[must_use]
    pub fn topic(&self, topic_url: &str) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(self.0.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(topic_url.as_bytes());
        let bits = mac.finalize().into_bytes();
        format!("{PREFIX}{}", hex::encode(&bits[..16]))
    }

    /// ntfy's publish URL of the reply topic for the notify topic at
    /// `topic_url` (on the same server), if that URL is one.
    #[must_use]
    pub fn url(&self, topic_url: &str) -> Option<String> {
        let (root, _) = super::split(topic_url).ok()?;
        Some(format!("{root}{}", self.topic(topic_url)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_topic_is_the_servers_own_and_on_the_same_ntfy_server() {
        let key = ReplyKey::of("k1");
        let url = key.url("https://ntfy.example/alice").unwrap();
        let topic = url.strip_prefix("https://ntfy.example/").unwrap();
        assert!(
            topic.starts_with(PREFIX) && topic.len() == PREFIX.len() + 32,
            "{topic}"
        );
        assert_eq!(key.topic("https://ntfy.example/alice"), topic);
        assert_ne!(key.topic("https://ntfy.example/bob"), topic);
        assert_ne!(
            ReplyKey::of("k2").topic("https://ntfy.example/alice"),
            topic
        );
        assert!(super::super::split(&url).is_ok(), "a topic name ntfy takes");
        assert_eq!(key.url("nope"), None);
        assert_eq!(format!("{key:?}"), "ReplyKey(..)");
    }
}
