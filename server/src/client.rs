//! A small REST client of Clarify's own API, for the command-line tools
//! (`clarify ask`, `clarify session create`) and the built-in demo agent.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A client of one server, with an optional bearer token.
#[derive(Debug, Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    /// What the answers it sends say they came through (provenance).
    channel: &'static str,
    http: reqwest::Client,
}

/// An answer from the API: status and JSON body (`null` when not JSON).
pub type Reply = (u16, Value);

impl Client {
    /// A client of `base` (`http://host:port`).
    #[must_use]
    pub fn new(base: &str, token: Option<String>) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            token,
            channel: "cli",
            // A server that is not there must be told in seconds, not after
            // the system's TCP timeout (`clarify mcp`'s tool errors).
            http: reqwest::Client::builder()
                .connect_timeout(std::time::Duration::from_secs(3))
                .build()
                .unwrap_or_default(),
        }
    }

    /// The same client, its answers reporting what the person chose in
    /// the agent's own terminal dialog (issue 47; the server takes it from
    /// the asking agent's session only).
    #[must_use]
    pub fn at_the_terminal(&self) -> Self {
        Self {
            channel: "terminal",
            ..self.clone()
        }
    }

    /// The bearer token it sends, if any.
    #[must_use]
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The server's base URL.
    #[must_use]
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends `method` to `/api/v1{path}` with an optional JSON body.
    ///
    /// # Errors
    /// A message when the server cannot be reached.
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<Reply, String> {
        // Says where an answer came from (provenance: the `cli` channel).
        let mut request = self
            .http
            .request(method, format!("{}/api/v1{path}", self.base))
            .header(crate::http::CLIENT_HEADER, self.channel);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {e}", self.base))?;
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// POSTs JSON.
    ///
    /// # Errors
    /// As [`Client::send`].
    pub async fn post(
        &self,
        path: &str,
        body: &(impl Serialize + ?Sized),
    ) -> Result<Reply, String> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// GETs.
    ///
    /// # Errors
    /// As [`Client::send`].
    pub async fn get(&self, path: &str) -> Result<Reply, String> {
        self.send(reqwest::Method::GET, path, None::<&Value>).await
    }
}

/// The body of a reply with status `expected`, read as the API's type `T`;
/// otherwise the API's error message.
///
/// # Errors
/// Another status, or a body that is not a `T`.
pub fn expect<T: DeserializeOwned>(reply: Reply, expected: &[u16]) -> Result<T, String> {
    if !expected.contains(&reply.0) {
        return Err(error_text(&reply));
    }
    serde_json::from_value(reply.1).map_err(|e| format!("unexpected answer from the server: {e}"))
}

/// The API's error message in a reply, or the status.
#[must_use]
pub fn error_text(reply: &Reply) -> String {
    reply.1["error"]
        .as_str()
        .map_or_else(|| format!("HTTP {}", reply.0), str::to_owned)
}
