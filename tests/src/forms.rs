//! An MCP client that fills in forms (elicitation) the way a person would,
//! by script: for `answer_with_me_kandev` (issue 30 item 1), in either
//! protocol era.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, ErrorData, RoleClient};
use serde_json::Value;

use crate::mcp::CLIENT_NAME;

/// What the person does with a form: given the form (its JSON, `message`
/// and `requestedSchema`), the result.
pub type Fill = Arc<dyn Fn(Value) -> BoxFuture<'static, ElicitResult> + Send + Sync>;

/// A client handler that shows forms to a scripted person.
#[derive(Clone)]
pub struct Former {
    fill: Fill,
    seen: Arc<Mutex<Vec<Value>>>,
}

impl Former {
    /// The forms shown so far, in order.
    ///
    /// # Panics
    /// When the lock is poisoned.
    #[must_use]
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

impl ClientHandler for Former {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        info.capabilities = capabilities;
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let form = serde_json::to_value(&request).expect("a form serializes");
        self.seen.lock().unwrap().push(form.clone());
        Ok((self.fill)(form).await)
    }
}

/// Accepts a form with `content`.
#[must_use]
pub fn accept(content: Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

/// Dismisses a form.
#[must_use]
pub fn decline() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}

/// A connected form-filling client.
pub type FormClient = RunningService<RoleClient, Former>;

/// Connects to `url` (with `token`, if any) as a client that shows forms
/// to `fill`: by `initialize`, or (`modern`) by the 2026-07-28 `discover`.
///
/// # Panics
/// When the connection fails.
pub async fn connect(url: &str, token: Option<&str>, modern: bool, fill: Fill) -> FormClient {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let lifecycle = if modern {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    let former = Former {
        fill,
        seen: Arc::default(),
    };
    former
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("MCP connection")
}
