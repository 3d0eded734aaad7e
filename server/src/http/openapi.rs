//! The published REST contract, `GET /api/v1/openapi.json`: OpenAPI 3.1
//! generated from the route table (each handler's `#[utoipa::path]`) and the
//! wire types of `clarify_core::api`, never written by hand, so it cannot
//! drift from what the server does.
//!
//! Here the generated paths get what every operation shares, stated once:
//! the errors any route can answer, and who may call it; and what the
//! types alone cannot say about what the server takes (issue 27 item 8):
//! no NUL in any text of a body ([`super::json`] refuses it), a body that
//! may be absent is never `null`, the shape of a page's `limit` and
//! `cursor`, a webhook URL the server will take, and the headers of a
//! WebSocket upgrade. Schemathesis holds the document to it with every
//! check (e2e/contract/schemathesis_check.py): a request the document
//! allows is taken, one it forbids is refused.

use std::sync::Arc;

use axum::extract::Extension;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

mod accepts;
mod nul;
use accepts::{alike_ids, flatten_bodies, pages, resume_commands, webhook_urls, websocket};
use nul::refuse_nul;

/// The document, serialized once at start-up.
#[derive(Debug, Clone)]
struct Document(Arc<str>);

/// Serves the document.
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "meta",
    security(()),
    responses((status = 200, description = "This document", content_type = "application/json")),
)]
async fn serve(Extension(Document(json)): Extension<Document>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        json.to_string(),
    )
}

/// The route serving `api` (with its own operation added) as the finished
/// document for a server with auth on or off.
pub fn route(mut api: utoipa::openapi::OpenApi, auth: bool) -> axum::Router<AppState> {
    let (router, own) = OpenApiRouter::new()
        .routes(routes!(serve))
        .split_for_parts();
    api.merge(own);
    let document = finish(api, auth);
    router.layer(Extension(Document(document.to_string().into())))
}

/// The generated document with its shared parts filled in.
fn finish(api: utoipa::openapi::OpenApi, auth: bool) -> Value {
    let mut document = serde_json::to_value(api).unwrap_or_default();
    document["info"] = json!({
        "title": "Clarify",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Coding agents ask a person 1 to 4 structured questions and block \
            until one of them answers; people and programs list and answer them. Every \
            error is answered as {\"error\": \"<message naming the field>\"}.",
    });
    document["components"]["securitySchemes"] = json!({
        "bearer": {
            "type": "http", "scheme": "bearer",
            "description": "A personal access token (clk_pat_…), when the server runs with --auth",
        },
        "agent_token": {
            "type": "http", "scheme": "bearer",
            "description": "A session's agent token (clk_agent_…), given once when the session is created",
        },
        "session_cookie": {
            "type": "apiKey", "in": "cookie", "name": crate::auth::identify::COOKIE_NAME,
            "description": "The browser's session, set by POST /api/v1/auth/login",
        },
    });
    link(&mut document);
    refuse_nul(&mut document);
    flatten_bodies(&mut document);
    pages(&mut document);
    webhook_urls(&mut document);
    resume_commands(&mut document);
    alike_ids(&mut document);
    websocket(&mut document);
    if let Some(paths) = document["paths"].as_object_mut() {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for operation in item.values_mut() {
                share(path, operation, auth);
            }
        }
    }
    document
}

/// What every operation shares: the errors any route can answer (the
/// same-origin policy's 403, the identity layer's 401, a malformed
/// request's 400, an internal error's 500) and, unless stated, who may call.
fn share(path: &str, operation: &mut Value, auth: bool) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        })
    };
    let mut shared = vec![
        (
            "403",
            error("Refused: a foreign Host or a cross-site Origin, or not allowed for this caller"),
        ),
        ("500", error("An internal error (logged, never detailed)")),
    ];
    let takes_input =
        operation.get("parameters").is_some() || operation.get("requestBody").is_some();
    if takes_input {
        shared.push(("400", error("Malformed: the message names the field")));
    }
    if operation.get("requestBody").is_some() {
        shared.extend([
            (
                "408",
                error("The body did not arrive within 10 s, a second more per 16 KiB received"),
            ),
            ("413", error("The body is larger than any request needs")),
            ("415", error("The body does not say it is JSON")),
            (
                "422",
                error("JSON of the wrong shape: the message names the field"),
            ),
        ]);
    }
    let mut unauthorized = error("Authentication required, or a credential that proves nothing");
    unauthorized["headers"] = json!({"WWW-Authenticate": {"schema": {"type": "string"}}});
    shared.push(("401", unauthorized));
    let responses = &mut operation["responses"];
    for (status, response) in shared {
        if responses.get(status).is_none() {
            responses[status] = response;
        }
    }
    if operation.get("security").is_none() {
        let mut who = vec![json!({"bearer": []}), json!({"session_cookie": []})];
        if path.starts_with("/api/v1/clarification/") {
            who.push(json!({"agent_token": []}));
        }
        if !auth {
            who.push(json!({}));
        }
        operation["security"] = Value::Array(who);
    }
}

/// How one operation's answer feeds the next, for clients and stateful
/// testers: the response of `method path` with `status` gives `target`
/// (an operationId) its `parameters`.
struct Link {
    path: &'static str,
    method: &'static str,
    status: &'static str,
    target: &'static str,
    parameters: &'static [(&'static str, &'static str)],
}

const NEW_ID: &[(&str, &str)] = &[("id", "$response.body#/id")];
const NEW_TURN: &[(&str, &str)] = &[
    ("id", "$request.path.id"),
    ("turn_id", "$response.body#/id"),
];

const fn from_new(path: &'static str, target: &'static str) -> Link {
    Link {
        path,
        method: "post",
        status: "201",
        target,
        parameters: NEW_ID,
    }
}

const LINKS: &[Link] = &[
    from_new("/api/v1/tasks", "get_task"),
    from_new("/api/v1/tasks", "create_session"),
    from_new("/api/v1/tasks", "list_sessions"),
    from_new("/api/v1/tasks/{id}/sessions", "get_session"),
    from_new("/api/v1/tasks/{id}/sessions", "patch_session"),
    from_new("/api/v1/tasks/{id}/sessions", "start_turn"),
    from_new("/api/v1/tasks/{id}/sessions", "list_messages"),
    Link {
        parameters: NEW_TURN,
        ..from_new("/api/v1/sessions/{id}/turns", "complete_turn")
    },
];

fn link(document: &mut Value) {
    for link in LINKS {
        let response = &mut document["paths"][link.path][link.method]["responses"][link.status];
        if response.is_null() {
            // A link from an operation that no longer exists: the contract
            // test catches it; never serve it half-made.
            continue;
        }
        let parameters: serde_json::Map<String, Value> = link
            .parameters
            .iter()
            .map(|(name, value)| ((*name).to_owned(), json!(value)))
            .collect();
        response["links"][link.target] =
            json!({"operationId": link.target, "parameters": parameters});
    }
}
