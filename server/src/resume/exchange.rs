//! One request to a peer the operator configured, its answer kept whole as
//! bytes (issue 49 item 3: the OpenID provider's discovery document, its
//! keys and its token endpoint): the webhooks' client and network policy,
//! no redirect, the answer read to at most [`MAX_ANSWER`] bytes within
//! [`WEBHOOK_TIMEOUT`], so a hostile or stuck peer neither stalls nor
//! fills the server.

use super::webhook::{MAX_ANSWER, Sent, WEBHOOK_TIMEOUT, Webhooks};

impl Webhooks {
    /// Sends `request` and reads its answer, whatever its status.
    ///
    /// # Errors
    /// [`Sent::Refused`] for a URL the policy refuses; [`Sent::Failed`]
    /// when it cannot be reached in time or answers more than it may.
    pub async fn exchange(
        &self,
        request: http::Request<Vec<u8>>,
        what: &str,
    ) -> Result<http::Response<Vec<u8>>, Sent> {
        let (parts, body) = request.into_parts();
        let url = self.admitted(&parts.uri.to_string(), what)?;
        let mut sent = self
            .http
            .request(parts.method, url)
            .timeout(WEBHOOK_TIMEOUT)
            .body(body);
        for (name, value) in &parts.headers {
            sent = sent.header(name, value);
        }
        let mut response = sent.send().await.map_err(|error| {
            tracing::warn!(what, error = %error.without_url(), "cannot reach");
            Sent::Failed
        })?;
        let mut answer = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut read = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|_| Sent::Failed)? {
            if read.len() + chunk.len() > MAX_ANSWER {
                tracing::warn!(what, "answered more than it may");
                return Err(Sent::Failed);
            }
            read.extend_from_slice(&chunk);
        }
        answer.body(read).map_err(|_| Sent::Failed)
    }
}
