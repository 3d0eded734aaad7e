//! MCP clients (the official Rust SDK, rmcp) against a test server.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt as _, RoleClient, ServiceExt as _,
};
use serde_json::Value;

use crate::server::TestServer;

/// A client handler that counts progress notifications.
#[derive(Debug, Clone)]
pub struct Recorder {
    progress: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            progress: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }
}

impl Recorder {
    /// Watches the number of progress notifications received.
    #[must_use]
    pub fn progress_count(&self) -> tokio::sync::watch::Receiver<usize> {
        self.progress.subscribe()
    }
}

/// The name this client gives in `initialize` (`clientInfo.name`), which
/// the server records as the answer's client (provenance).
pub const CLIENT_NAME: &str = "clarify-tests";

impl ClientHandler for Recorder {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        info.client_info = rmcp::model::Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.send_modify(|n| *n += 1);
    }
}

/// A connected client.
pub type Client = RunningService<RoleClient, Recorder>;

/// Connects to `path` (`/mcp` or `/mcp/agent`) with `token`, if any.
///
/// # Panics
/// When the handshake fails.
pub async fn connect(server: &TestServer, path: &str, token: Option<&str>) -> Client {
    connect_url(&server.url(path), token).await
}

/// Connects to the MCP endpoint at `url` with `token`, if any.
///
/// # Panics
/// When the handshake fails.
pub async fn connect_url(url: &str, token: Option<&str>) -> Client {
    connect_url_with(url, token, reqwest_mcp::Client::default()).await
}

/// [`connect_url`] through `http` (bound to a source address, say).
///
/// # Panics
/// When the handshake fails.
pub async fn connect_url_with(url: &str, token: Option<&str>, http: reqwest_mcp::Client) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(http, config);
    Recorder::default()
        .serve(transport)
        .await
        .expect("MCP handshake")
}

/// An agent's client in the 2026-07-28 era (capabilities on every
/// request) that declares the tasks extension, or not (issue 30 item 3).
#[derive(Debug, Clone)]
pub struct ModernAgent {
    /// Whether it declares `io.modelcontextprotocol/tasks`.
    pub tasks: bool,
}

impl ClientHandler for ModernAgent {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
        if self.tasks {
            info.capabilities = ClientCapabilities::builder().enable_tasks().build();
        }
        info
    }
}

/// A connected [`ModernAgent`].
pub type ModernClient = RunningService<RoleClient, ModernAgent>;

/// Connects to `/mcp/agent` at `url` with the agent `token`, by the
/// 2026-07-28 `discover`, declaring the tasks extension when `tasks`.
///
/// # Panics
/// When the connection fails.
pub async fn connect_modern(url: &str, token: &str, tasks: bool) -> ModernClient {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    ModernAgent { tasks }
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .expect("MCP connection")
}

/// Calls `tool` with `args` (a JSON object).
///
/// # Panics
/// On a protocol error.
pub async fn call(client: &rmcp::Peer<RoleClient>, tool: &str, args: &Value) -> CallToolResult {
    let arguments = args.as_object().expect("an object").clone();
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("tool call")
}

/// The structured content of a successful result.
///
/// # Panics
/// When the result is an error.
#[must_use]
pub fn ok(result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "tool error: {:?}",
        result.content
    );
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// The text of an error result.
///
/// # Panics
/// When the result is not an error.
#[must_use]
pub fn err(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "expected an error: {result:?}");
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The `pending_id`s on a page of `list_pending_questions_kandev`, in
/// order.
///
/// # Panics
/// When the page has no list of bundles with ids.
#[must_use]
pub fn pending_ids(page: &Value) -> Vec<String> {
    page["bundles"]
        .as_array()
        .expect("bundles is a list")
        .iter()
        .map(|b| b["pending_id"].as_str().expect("pending_id").to_owned())
        .collect()
}

/// L3: every key a listed bundle always carries (L4a), present in `bundle`.
///
/// # Panics
/// When one is missing.
pub fn assert_l3_keys(bundle: &Value) {
    for key in [
        "pending_id",
        "task_id",
        "session_id",
        "created_at",
        "age_seconds",
        "context",
        "questions",
    ] {
        assert!(bundle.get(key).is_some(), "L3 {key}: {bundle}");
    }
}
