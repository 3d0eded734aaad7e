//! Calls to the peers' own APIs (issue 48): Slack's, Telegram's and
//! Discord's methods, answered in JSON, and ntfy's streamed subscription;
//! every one through the webhooks' client and network policy.

use std::time::Duration;

use super::webhook::{MAX_ANSWER, Sent, WEBHOOK_TIMEOUT, Webhooks, literal_admitted};

impl Webhooks {
    /// `url` parsed, if the network policy admits its address as written
    /// (a name is checked again when resolved).
    pub(super) fn admitted(&self, url: &str, what: &str) -> Result<reqwest::Url, Sent> {
        let parsed = reqwest::Url::parse(url).map_err(|_| Sent::Refused)?;
        if !literal_admitted(&self.networks, &parsed) {
            tracing::warn!(what, "a peer's address is not one webhooks may reach");
            return Err(Sent::Refused);
        }
        Ok(parsed)
    }

    /// POSTs `body` (JSON) to a chat API's `url` with `headers` and reads
    /// its JSON answer, at most [`MAX_ANSWER`] bytes: Slack and Telegram
    /// say what they made (a message's id) and whether it worked in the
    /// body. The same client and policy as every webhook.
    ///
    /// # Errors
    /// [`Sent::Refused`] for a URL the policy refuses; [`Sent::Failed`] for
    /// anything else that is not a 2xx answer of JSON within the bound.
    pub async fn call(
        &self,
        url: &str,
        body: String,
        headers: &[(&'static str, &str)],
        what: &str,
    ) -> Result<serde_json::Value, Sent> {
        self.call_within(url, body, headers, what, WEBHOOK_TIMEOUT)
            .await
    }

    /// [`Webhooks::call`] given `timeout` to answer rather than
    /// [`WEBHOOK_TIMEOUT`]: a long poll (Telegram's `getUpdates`) is
    /// answered when something happens, or after the wait it asked for.
    ///
    /// # Errors
    /// As [`Webhooks::call`].
    pub async fn call_within(
        &self,
        url: &str,
        body: String,
        headers: &[(&'static str, &str)],
        what: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, Sent> {
        let method = reqwest::Method::POST;
        self.request_within(method, url, Some(body), headers, what, timeout)
            .await
    }

    /// [`Webhooks::call`] with another `method` (Discord's REST API
    /// edits with `PATCH` and reads with `GET`), and `body` optional; an
    /// empty answer (`204 No Content`) reads as `null`.
    ///
    /// # Errors
    /// As [`Webhooks::call`].
    pub async fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<String>,
        headers: &[(&'static str, &str)],
        what: &str,
    ) -> Result<serde_json::Value, Sent> {
        self.request_within(method, url, body, headers, what, WEBHOOK_TIMEOUT)
            .await
    }

    /// [`Webhooks::request`] given `timeout` to answer.
    async fn request_within(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<String>,
        headers: &[(&'static str, &str)],
        what: &str,
        timeout: Duration,
    ) -> Result<serde_json::Value, Sent> {
        let parsed = self.admitted(url, what)?;
        let mut request = self.http.request(method, parsed).timeout(timeout);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = request.send().await.map_err(|error| {
            // Without the URL: Telegram's holds the bot's token.
            tracing::warn!(what, error = %error.without_url(), "chat API failed");
            Sent::Failed
        })?;
        let status = response.status();
        let mut read = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|_| Sent::Failed)? {
            if read.len() + chunk.len() > MAX_ANSWER {
                tracing::warn!(what, "chat API answered more than it may");
                return Err(Sent::Failed);
            }
            read.extend_from_slice(&chunk);
        }
        if read.is_empty() && status.is_success() {
            return Ok(serde_json::Value::Null);
        }
        match serde_json::from_slice(&read) {
            Ok(answer) if status.is_success() => Ok(answer),
            _ => {
                tracing::warn!(what, %status, "chat API refused");
                Err(Sent::Failed)
            }
        }
    }
    /// Opens a subscription: a GET of `url` with `headers` whose answer
    /// streams for as long as it stays open (issue 48: ntfy's JSON
    /// stream). The same policy as every webhook, checked again now.
    ///
    /// # Errors
    /// [`Sent::Refused`] for a URL the policy refuses; [`Sent::Failed`]
    /// when it cannot be reached or answers other than 2xx.
    pub async fn subscribe(
        &self,
        url: &str,
        headers: &[(&'static str, &str)],
        what: &str,
    ) -> Result<reqwest::Response, Sent> {
        let parsed = self.admitted(url, what)?;
        let mut request = self.stream.get(parsed);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => Ok(response),
            Ok(response) => {
                tracing::warn!(what, status = %response.status(), "subscription refused");
                Err(Sent::Failed)
            }
            Err(error) => {
                tracing::warn!(what, error = %error.without_url(), "subscription failed");
                Err(Sent::Failed)
            }
        }
    }
}
