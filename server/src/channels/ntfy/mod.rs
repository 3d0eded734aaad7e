//! ntfy (issue 28 item 2, issue 48 item 1): a notice published to an ntfy
//! topic as JSON (ntfy's "publish as JSON": a POST to the server's root URL
//! naming the topic), so a phone shows it with one button per option
//! ([`mod@publish`]). A button publishes the option's answer-link token to the
//! topic's reply topic on the same ntfy server ([`reply`]), which Clarify
//! subscribes to ([`stream`], [`replies`]): a tap answers while the phone
//! never reaches Clarify, and Clarify needs no inbound port.
//!
//! An ntfy target is kept in the outbox as `ntfy:` and its topic URL, so
//! the row says how it is sent; the body stays the notice, made into
//! ntfy's shape when it is sent.

pub mod publish;
pub mod replies;
pub mod reply;
pub mod stream;

pub use publish::{ReplyTo, publish};
pub use replies::Replies;
pub use reply::ReplyKey;

use clarify_core::api::Notice;

use crate::db::notifications::Outgoing;
use crate::resume::{Sent, Webhooks};

/// How an ntfy topic is named in the outbox's `target`.
const SCHEME: &str = "ntfy:";

/// The outbox target for the topic at `topic_url`.
#[must_use]
pub fn target(topic_url: &str) -> String {
    format!("{SCHEME}{topic_url}")
}

/// The topic URL of an outbox target, if it is an ntfy one.
#[must_use]
pub fn topic_url(target: &str) -> Option<&str> {
    target.strip_prefix(SCHEME)
}

/// Where to publish for `topic_url` (`https://ntfy.example/alice`): the
/// server's root URL, and the topic.
///
/// # Errors
/// A URL that is not http(s) or names no topic, phrased for `--notify-ntfy`.
pub fn split(topic_url: &str) -> Result<(String, String), String> {
    const MUST: &str = "--notify-ntfy: must be a topic's URL, such as https://ntfy.sh/your-topic";
    let mut url = reqwest::Url::parse(topic_url).map_err(|_| MUST.to_owned())?;
    if !matches!(url.scheme(), "http" | "https") || url.query().is_some() {
        return Err(MUST.to_owned());
    }
    let path = url.path().trim_end_matches('/').to_owned();
    let (root, topic) = path.rsplit_once('/').ok_or_else(|| MUST.to_owned())?;
    if topic.is_empty()
        || !topic
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_".contains(c))
    {
        return Err(MUST.to_owned());
    }
    url.set_path(&format!("{root}/"));
    Ok((url.to_string(), topic.to_owned()))
}

/// `channels` with ntfy's buttons replying through the reply topics, when
/// it publishes to any (their key is loaded, or made, in `db`).
///
/// # Errors
/// Database errors.
pub async fn with_replies(
    channels: super::Channels,
    db: &crate::db::Db,
) -> Result<super::Channels, crate::lifecycle::Error> {
    if channels.ntfy_topics().is_empty() {
        return Ok(channels);
    }
    Ok(channels.with_ntfy_replies(ReplyKey::load(db).await?))
}

/// One attempt at `row` (already claimed) for the topic at `topic_url`,
/// published with `token` (`Bearer`) if any, its buttons replying to the
/// reply topic `key` names; `None` for a row that can never be sent (its
/// topic URL or its notice does not parse).
pub(super) async fn send(
    webhooks: &Webhooks,
    row: &Outgoing,
    topic_url: &str,
    token: Option<&str>,
    key: Option<&ReplyKey>,
    what: &str,
) -> Option<Sent> {
    let (Ok((root, topic)), Ok(notice)) =
        (split(topic_url), serde_json::from_str::<Notice>(&row.body))
    else {
        return None;
    };
    let bearer = token.map(|token| format!("Bearer {token}"));
    let mut headers = super::webhook::headers(row);
    headers.extend(bearer.as_deref().map(|b| ("authorization", b)));
    let reply_url = key.and_then(|key| key.url(topic_url));
    let reply = reply_url.as_deref().map(|url| ReplyTo {
        url,
        authorization: bearer.as_deref(),
    });
    let body = publish(&notice, &topic, reply).to_string();
    Some(webhooks.post(&root, body, &headers, what).await)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_url_splits_into_the_root_and_the_topic() {
        assert_eq!(
            split("https://ntfy.example/clarify-alice").unwrap(),
            (
                "https://ntfy.example/".to_owned(),
                "clarify-alice".to_owned()
            )
        );
        assert_eq!(
            split("http://127.0.0.1:81/ntfy/alice/").unwrap(),
            ("http://127.0.0.1:81/ntfy/".to_owned(), "alice".to_owned())
        );
        for bad in [
            "https://ntfy.example/",
            "ftp://x/t",
            "https://x/t?a=1",
            "nope",
            "https://x/a b",
        ] {
            assert!(split(bad).is_err(), "{bad}");
        }
        assert_eq!(topic_url(&target("https://n/t")), Some("https://n/t"));
        assert_eq!(topic_url("https://hooks.example/x"), None);
    }
}
