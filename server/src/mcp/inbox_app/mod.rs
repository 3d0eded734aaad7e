//! The inbox as an MCP App (issue 30 item 2, `io.modelcontextprotocol/ui`,
//! 2026-01-26): `list_pending_questions_kandev` names the `ui://` page a
//! host renders in a sandboxed frame; the page lists what waits and
//! answers through the app-only tool, the one claim underneath. The page
//! has no network of its own (its CSP allows no connection): every read
//! and answer is a tool call through the host. A host without apps reads
//! the tool's text, as before.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{MetaObject, ReadResourceResult, Resource, ResourceContents, Tool};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

/// The page's address.
pub const URI: &str = "ui://clarify/inbox";

/// The MIME type hosts render as an app.
pub const MIME: &str = "text/html;profile=mcp-app";

/// The extension a host declares when it renders apps.
const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The page: self-contained (inline script and style), so it needs no
/// origin of its own and its CSP can forbid every connection.
const PAGE: &str = include_str!("page.html");

/// The `_meta` of the tool whose result the page shows: both spellings,
/// as the extension's own SDK writes them (the flat one for older hosts).
pub fn list_meta() -> MetaObject {
    meta(json!({"ui": {"resourceUri": URI}, "ui/resourceUri": URI}))
}

/// The `_meta` of a tool only the page may call: hosts keep it from the
/// model.
pub fn app_only_meta() -> MetaObject {
    meta(json!({"ui": {"resourceUri": URI, "visibility": ["app"]}}))
}

/// Whether `tool` is for the page only.
pub fn is_app_only(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .and_then(|meta| meta.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
        .is_some_and(|visibility| !visibility.iter().any(|v| v == "model"))
}

/// Whether this request's client renders apps (declared `mimeTypes`
/// including [`MIME`]): only then are app-only tools listed, since a host
/// that ignores `_meta.ui` would offer them to its model.
pub fn host_renders_apps(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.extensions)
        .and_then(|extensions| extensions.get(EXTENSION).cloned())
        .and_then(|settings| settings.get("mimeTypes").cloned())
        .and_then(|types| types.as_array().cloned())
        .is_some_and(|types| types.iter().any(|t| t == MIME))
}

/// The page as `resources/list` names it.
pub fn resource() -> Resource {
    Resource::new(URI, "clarify-inbox")
        .with_title("Questions waiting for you")
        .with_description("The questions coding agents are waiting on, answered in place.")
        .with_mime_type(MIME)
        .with_size(u64::try_from(PAGE.len()).unwrap_or(u64::MAX))
        .with_meta(ui_meta())
}

/// `resources/read`: the page, or `-32002` for any other address.
///
/// # Errors
/// An unknown resource.
pub fn read(uri: &str) -> Result<ReadResourceResult, McpError> {
    if uri != URI {
        return Err(McpError::resource_not_found(
            "no such resource",
            Some(json!({"uri": uri})),
        ));
    }
    let contents = ResourceContents::text(PAGE, URI)
        .with_mime_type(MIME)
        .with_meta(ui_meta());
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The page's CSP and look: no domain of any kind (no connection, no
/// script, style, image or frame from elsewhere).
fn ui_meta() -> MetaObject {
    meta(json!({"ui": {
        "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
        "prefersBorder": true
    }}))
}

fn meta(value: Value) -> MetaObject {
    match value {
        Value::Object(object) => MetaObject(object),
        _ => MetaObject::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page is small enough to send on every render; its size is
    /// watched here (issue 30: "measure its size").
    #[test]
    fn the_page_is_small_and_self_contained() {
        assert!(PAGE.len() < 16 * 1024, "{} bytes", PAGE.len());
        for outside in [
            "<script src",
            "<link",
            "http://",
            "https://",
            "fetch(",
            "XMLHttpRequest",
            "innerHTML",
        ] {
            assert!(!PAGE.contains(outside), "the page uses {outside}");
        }
    }

    #[test]
    fn app_only_is_read_from_the_visibility() {
        let tool = |meta: MetaObject| {
            let mut tool = Tool::default();
            tool.meta = Some(meta);
            tool
        };
        assert!(is_app_only(&tool(app_only_meta())));
        assert!(!is_app_only(&tool(list_meta())));
    }
}
