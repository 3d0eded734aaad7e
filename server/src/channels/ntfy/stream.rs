//! ntfy's JSON stream (issue 48 item 1): `GET <server>/<topic>/json?since=`
//! answers one JSON object a line for as long as it stays open: an `open`
//! event, `keepalive`s, and each `message` with its id, which `since=`
//! takes to resume after it. Only messages on the topic asked for count.

use serde::Deserialize;

use crate::resume::{Sent, Webhooks};

/// The longest line read: ntfy's messages are at most 4,096 bytes, and
/// anything longer is not a reply (it is skipped, and the stream read on).
const MAX_LINE: usize = 16 * 1024;

/// One line of the stream.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct Line {
    /// The message's id (what `since=` takes).
    #[serde(default)]
    pub id: String,
    /// `open`, `keepalive`, `message`, `poll_request`.
    #[serde(default)]
    pub event: String,
    /// The topic it was published to.
    #[serde(default)]
    pub topic: String,
    /// The message's text: what a reply button published.
    #[serde(default)]
    pub message: String,
}

/// An open subscription, read a line at a time.
pub struct Stream {
    response: reqwest::Response,
    read: Vec<u8>,
    skipping: bool,
}

/// The stream's URL for `reply_url`, resuming after the message `since`
/// (`all` from the first start: ntfy keeps what was sent for hours).
#[must_use]
pub fn url(reply_url: &str, since: Option<&str>) -> String {
    let since = since
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()))
        .unwrap_or("all");
    format!("{reply_url}/json?since={since}")
}

impl Stream {
    /// Subscribes to `reply_url` after `since`, with `authorization` if any.
    ///
    /// # Errors
    /// As [`Webhooks::subscribe`].
    pub async fn open(
        webhooks: &Webhooks,
        reply_url: &str,
        since: Option<&str>,
        authorization: Option<&str>,
    ) -> Result<Self, Sent> {
        let headers: Vec<(&'static str, &str)> = authorization
            .map(|a| ("authorization", a))
            .into_iter()
            .collect();
        let response = webhooks
            .subscribe(&url(reply_url, since), &headers, "ntfy replies")
            .await?;
        Ok(Self {
            response,
            read: Vec::new(),
            skipping: false,
        })
    }

    /// The next line that parses; `None` when the stream ended or broke.
    pub async fn next(&mut self) -> Option<Line> {
        loop {
            if let Some(end) = self.read.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.read.drain(..=end).collect();
                if std::mem::take(&mut self.skipping) {
                    continue;
                }
                if let Ok(parsed) = serde_json::from_slice::<Line>(&line) {
                    return Some(parsed);
                }
                continue;
            }
            if self.read.len() > MAX_LINE {
                // The rest of this line is dropped as it comes.
                self.read.clear();
                self.skipping = true;
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.read.extend_from_slice(&chunk),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_resumes_after_the_last_id_or_from_all_it_keeps() {
        assert_eq!(
            url("http://n/r", Some("Ab12")),
            "http://n/r/json?since=Ab12"
        );
        assert_eq!(url("http://n/r", None), "http://n/r/json?since=all");
        assert_eq!(
            url("http://n/r", Some("a&b=1")),
            "http://n/r/json?since=all"
        );
        let line: Line = serde_json::from_str(
            r#"{"id":"x1","time":1,"event":"message","topic":"r","message":"clk_link_1"}"#,
        )
        .unwrap();
        assert_eq!(
            (line.id.as_str(), line.message.as_str()),
            ("x1", "clk_link_1")
        );
    }
}
