//! The inbox as an MCP App on `/mcp` (issue 30 item 2), as an rmcp client
//! sees it in both eras: the list tool names `ui://clarify/inbox`, the page
//! is served with its MIME type and a CSP that allows no connection, the
//! app-only answer tool is listed only to a host that renders apps, and it
//! answers through the one claim (N2, R2, provenance `mcp`). The page in a
//! real host bridge is `e2e/tests/inbox_app.spec.ts`.

use clarify_tests::TestServer;
use clarify_tests::mcp::CLIENT_NAME;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ErrorCode, Implementation,
    ProtocolVersion, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt as _, RoleClient};
use serde_json::{Value, json};

const URI: &str = "ui://clarify/inbox";
const MIME: &str = "text/html;profile=mcp-app";
const APP_TOOL: &str = "answer_in_inbox_kandev";

/// A host that renders apps, or one that does not.
#[derive(Debug, Clone)]
struct Host {
    apps: bool,
}

impl ClientHandler for Host {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"));
        if self.apps {
            let mut extensions = std::collections::BTreeMap::new();
            let settings = json!({"mimeTypes": [MIME]});
            extensions.insert(
                "io.modelcontextprotocol/ui".to_owned(),
                settings.as_object().unwrap().clone(),
            );
            info.capabilities = ClientCapabilities::builder()
                .enable_extensions_with(extensions)
                .build();
        }
        info
    }
}

type Client = RunningService<RoleClient, Host>;

async fn host(server: &TestServer, apps: bool, modern: bool) -> Client {
    let config = StreamableHttpClientTransportConfig::with_uri(server.url("/mcp"));
    let lifecycle = if modern {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    };
    Host { apps }
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .expect("MCP connection")
}

async fn tools(client: &Client) -> Vec<Value> {
    let listed = client.list_all_tools().await.expect("tools/list");
    listed
        .iter()
        .map(|tool| serde_json::to_value(tool).unwrap())
        .collect()
}

async fn the_page_and_its_tools(modern: bool) {
    let server = TestServer::start().await;
    let apps = host(&server, true, modern).await;
    let listed = tools(&apps).await;
    let named = |name: &str| listed.iter().find(|t| t["name"] == name).cloned();
    let list = named("list_pending_questions_kandev").expect("the list tool");
    assert_eq!(list["_meta"]["ui"]["resourceUri"], URI, "{list}");
    assert_eq!(list["_meta"]["ui/resourceUri"], URI, "the older hosts' key");
    let app_tool = named(APP_TOOL).expect("listed to a host that renders apps");
    assert_eq!(app_tool["_meta"]["ui"]["visibility"], json!(["app"]));
    // A host without apps would offer it to its model: not listed there.
    let plain = host(&server, false, modern).await;
    assert!(
        !tools(&plain).await.iter().any(|t| t["name"] == APP_TOOL),
        "an app-only tool listed to a host without apps"
    );

    let resources = apps.list_all_resources().await.expect("resources/list");
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, URI);
    assert_eq!(resources[0].mime_type.as_deref(), Some(MIME));
    let read = apps
        .read_resource(ReadResourceRequestParams::new(URI))
        .await
        .expect("resources/read");
    let ResourceContents::TextResourceContents {
        mime_type,
        text,
        meta,
        ..
    } = &read.contents[0]
    else {
        panic!("a text resource: {read:?}");
    };
    assert_eq!(mime_type.as_deref(), Some(MIME));
    assert!(text.starts_with("<!DOCTYPE html>"), "{text}");
    let csp = &meta.as_ref().expect("_meta.ui").0["ui"]["csp"];
    assert_eq!(
        csp["connectDomains"],
        json!([]),
        "no connection allowed: {csp}"
    );
    assert_eq!(csp["resourceDomains"], json!([]));
    let unknown = apps
        .read_resource(ReadResourceRequestParams::new("ui://clarify/elsewhere"))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = unknown else {
        panic!("a JSON-RPC error: {unknown:?}");
    };
    // The 2026-07-28 era says so with -32602 (rmcp maps it); before, -32002.
    let expected = if modern {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    assert_eq!(error.code, expected);
    server.stop().await;
}

#[tokio::test]
async fn the_page_and_its_tools_initialize_era() {
    the_page_and_its_tools(false).await;
}

#[tokio::test]
async fn the_page_and_its_tools_2026_07_28_era() {
    the_page_and_its_tools(true).await;
}

/// N2, R2: the app's answer is the one claim; a second is told the first.
#[tokio::test]
async fn n2_the_app_answers_through_the_one_claim() {
    let server = TestServer::start().await;
    let (_, session, agent) = server.session(None).await;
    let pending = server
        .ask(
            &session,
            &agent,
            json!([{"prompt": "Which region for the app?", "options": [{"label": "eu"}, {"label": "us"}]}]),
        )
        .await;
    let apps = host(&server, true, true).await;
    let answer = |option: &str| {
        let args = json!({"pending_id": pending, "answers": [{"question_id": "q1", "selected_options": [option]}]});
        CallToolRequestParams::new(APP_TOOL).with_arguments(args.as_object().unwrap().clone())
    };
    let won = apps.call_tool(answer("q1_opt2")).await.expect("tools/call");
    let won = won.structured_content.expect("structured");
    assert_eq!(won["claimed"], true, "{won}");
    let (_, view) = server.get(&format!("/clarification/{pending}")).await;
    assert_eq!(view["answered_by"]["channel"], "mcp", "{view}");
    assert_eq!(view["answered_by"]["client"], CLIENT_NAME);

    let lost = apps.call_tool(answer("q1_opt1")).await.expect("tools/call");
    let lost = lost.structured_content.expect("structured");
    assert_eq!(lost["claimed"], false, "{lost}");
    assert_eq!(
        lost["response"]["answers"][0]["selected_options"],
        json!(["q1_opt2"]),
        "the loser is told the winner's answer"
    );
    server.stop().await;
}
