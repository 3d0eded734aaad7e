//! The published REST contract (issue 14): `GET /api/v1/openapi.json` is
//! OpenAPI 3.1, made from the route table, and lists every route of
//! DESIGN.md's contract with its errors and who may call it.
//! (Schemathesis attacks the live server with it in the test command:
//! e2e/contract/schemathesis_check.py.)

use std::collections::BTreeSet;

use clarify_server::Config;
use clarify_tests::TestServer;
use serde_json::{Value, json};

/// DESIGN.md "Contract": every REST operation, and nothing else.
const OPERATIONS: &[(&str, &str)] = &[
    ("post", "/api/v1/auth/login"),
    ("post", "/api/v1/auth/logout"),
    ("get", "/api/v1/auth/me"),
    ("get", "/api/v1/auth/oidc/start"),
    ("get", "/api/v1/auth/oidc/callback"),
    ("get", "/api/v1/openapi.json"),
    ("get", "/api/v1/audit"),
    ("get", "/api/v1/activity"),
    ("post", "/api/v1/workspaces"),
    ("get", "/api/v1/workspaces"),
    ("get", "/api/v1/workspaces/{id}/notify"),
    ("put", "/api/v1/workspaces/{id}/notify"),
    ("post", "/api/v1/tasks"),
    ("get", "/api/v1/tasks"),
    ("get", "/api/v1/tasks/{id}"),
    ("post", "/api/v1/tasks/{id}/sessions"),
    ("get", "/api/v1/tasks/{id}/sessions"),
    ("get", "/api/v1/sessions/{id}"),
    ("patch", "/api/v1/sessions/{id}"),
    ("post", "/api/v1/sessions/{id}/turns"),
    ("post", "/api/v1/sessions/{id}/turns/{turn_id}/complete"),
    ("get", "/api/v1/sessions/{id}/messages"),
    // The mission's "list … pending questions over … REST" (issue 16's inbox).
    ("get", "/api/v1/pending"),
    ("get", "/api/v1/pending/stream"),
    ("post", "/api/v1/clarification/request"),
    ("get", "/api/v1/clarification/{id}"),
    ("get", "/api/v1/clarification/{id}/wait"),
    ("post", "/api/v1/clarification/{id}/respond"),
    ("post", "/api/v1/clarification/respond-alike"),
    ("post", "/api/v1/clarification/{id}/cancel"),
    ("post", "/api/v1/clarification/{id}/assign"),
    ("post", "/api/v1/clarification/{id}/detach"),
    ("get", "/api/v1/clarification/{id}/attempts"),
    ("get", "/api/v1/ws"),
];

async fn document(auth: bool) -> Value {
    let server = TestServer::start_with(Config {
        auth,
        ..Config::default()
    })
    .await;
    // Open to everyone, like /auth/me: it holds no secret.
    let response = server
        .client()
        .get(server.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let document = response.json().await.unwrap();
    server.stop().await;
    document
}

fn operations(document: &Value) -> impl Iterator<Item = (&str, &str, &Value)> {
    document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .map(move |(method, operation)| (method.as_str(), path.as_str(), operation))
        })
}

#[tokio::test]
async fn the_document_is_openapi_3_1_listing_exactly_the_contract() {
    let document = document(false).await;
    assert_eq!(document["openapi"], "3.1.0");
    let listed: BTreeSet<(&str, &str)> = operations(&document).map(|(m, p, _)| (m, p)).collect();
    let expected: BTreeSet<(&str, &str)> = OPERATIONS.iter().copied().collect();
    assert_eq!(listed, expected);
    let schemes = document["components"]["securitySchemes"]
        .as_object()
        .unwrap();
    let names: BTreeSet<&str> = schemes.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        BTreeSet::from(["agent_token", "bearer", "session_cookie"])
    );
    assert_eq!(schemes["session_cookie"]["in"], "cookie");

    // Links lead from a new resource to what can be done with it, and only
    // to operations that exist.
    let ids: BTreeSet<&str> = operations(&document)
        .map(|(_, _, o)| o["operationId"].as_str().unwrap())
        .collect();
    let mut targets = BTreeSet::new();
    for (_, _, operation) in operations(&document) {
        for response in operation["responses"].as_object().unwrap().values() {
            for link in response["links"]
                .as_object()
                .into_iter()
                .flat_map(|l| l.values())
            {
                let target = link["operationId"].as_str().unwrap();
                assert!(
                    ids.contains(target),
                    "a link to {target}, which is no operation"
                );
                targets.insert(target);
            }
        }
    }
    assert!(targets.is_superset(&BTreeSet::from([
        "get_task",
        "create_session",
        "complete_turn"
    ])));
}

#[tokio::test]
async fn every_error_is_documented_in_the_error_shape() {
    let document = document(false).await;
    let error_body = "#/components/schemas/ErrorBody";
    assert_eq!(
        document["components"]["schemas"]["ErrorBody"]["required"],
        serde_json::json!(["error"])
    );
    for (method, path, operation) in operations(&document) {
        let responses = operation["responses"].as_object().unwrap();
        for status in ["401", "403", "500"] {
            assert!(
                responses.contains_key(status),
                "{method} {path}: no {status}"
            );
        }
        if operation.get("requestBody").is_some() {
            for status in ["400", "413", "415", "422"] {
                assert!(
                    responses.contains_key(status),
                    "{method} {path}: no {status}"
                );
            }
        }
        for (status, response) in responses {
            if status.starts_with('4') || status.starts_with('5') {
                assert_eq!(
                    response["content"]["application/json"]["schema"]["$ref"], error_body,
                    "{method} {path} {status}"
                );
            }
        }
    }
}

/// R12: the envelope's keys are always present, and the document says so.
#[tokio::test]
async fn r12_the_response_envelope_requires_every_key() {
    let document = document(false).await;
    let schemas = &document["components"]["schemas"];
    let required = |name: &str| -> BTreeSet<String> {
        serde_json::from_value(schemas[name]["required"].clone()).unwrap()
    };
    assert_eq!(
        required("RespondBody"),
        ["claimed", "response", "status", "success"]
            .map(String::from)
            .into()
    );
    assert_eq!(
        required("Response"),
        [
            "answers",
            "pending_id",
            "reject_reason",
            "rejected",
            "responded_at"
        ]
        .map(String::from)
        .into()
    );
}

/// Anonymous calls are documented exactly when the server takes them.
#[tokio::test]
async fn who_may_call_follows_the_auth_setting() {
    let anonymous = |document: &Value, path: &str, method: &str| {
        document["paths"][path][method]["security"]
            .as_array()
            .unwrap()
            .iter()
            .any(|requirement| requirement.as_object().unwrap().is_empty())
    };
    let off = document(false).await;
    let on = document(true).await;
    assert!(anonymous(&off, "/api/v1/tasks", "get"));
    assert!(!anonymous(&on, "/api/v1/tasks", "get"));
    assert!(anonymous(&on, "/api/v1/auth/me", "get"));
    let respond = &on["paths"]["/api/v1/clarification/{id}/respond"]["post"]["security"];
    assert!(respond.to_string().contains("agent_token"), "{respond}");
}

/// What Schemathesis found first: axum's own rejections were plain text.
#[tokio::test]
async fn path_query_and_upgrade_rejections_use_the_error_shape() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/clarification/x/wait?timeout=abc").await;
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("timeout"),
        "{body}"
    );
    let (status, body) = server.get("/ws").await;
    assert_eq!(status, 400);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("expected a WebSocket upgrade request"),
        "{body}"
    );
    // A path no route serves is a 404 in the error shape, not an empty
    // body: Schemathesis linked POST /tasks's `workspace_id: ""` into
    // /workspaces/{id}/notify and sent /workspaces/notify.
    for path in ["/workspaces/notify", "/no-such-route"] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"], "route not found", "{path}: {body}");
    }
    let (status, body) = server.get("/workspaces//notify").await;
    assert_eq!(
        (status, &body["error"]),
        (404, &json!("workspace not found"))
    );
    server.stop().await;
}

/// Issue 27 item 8: what the server refuses, the document forbids (the
/// rest is Schemathesis's, with every check).
#[tokio::test]
async fn the_document_forbids_what_the_server_refuses() {
    let document = document(false).await;
    let schemas = &document["components"]["schemas"];
    let no_nul = json!(r"^[^\x00]*$");
    // No NUL in any text of a body (json.rs), keys included.
    let name = &schemas["NewWorkspace"]["properties"]["name"];
    assert!(
        name["pattern"].as_str().unwrap().contains(r"\x00") && name.get("allOf").is_none(),
        "{name}"
    );
    // Bounded in its pattern too (issue 45 item 9), as in its maxLength.
    assert_eq!(
        schemas["AnswerInput"]["properties"]["custom_text"]["pattern"],
        r"^[^\x00]{0,2000}$"
    );
    assert_eq!(schemas["NewBundle"]["propertyNames"]["pattern"], no_nul);
    // Null reads as absent where the server says so (N1), and `reason`
    // is the alias of `reject_reason`.
    assert_eq!(
        schemas["Submission"]["properties"]["reason"]["type"],
        json!(["string", "null"])
    );
    // An optional body is absent, never `null`.
    let body = &document["paths"]["/api/v1/tasks/{id}/sessions"]["post"]["requestBody"];
    assert!(!body["required"].as_bool().unwrap_or(false));
    assert_eq!(
        body["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/NewSession"
    );
    // A page's limit is a whole number (or empty, read as absent), its
    // cursor one the server issued.
    let parameters = document["paths"]["/api/v1/tasks"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let schema =
        |name: &str| parameters.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
    assert_eq!(schema("limit")["anyOf"][0]["type"], "integer");
    assert_eq!(schema("limit")["anyOf"][1]["maxLength"], 0);
    assert!(
        schema("cursor")["pattern"]
            .as_str()
            .unwrap()
            .contains("djE6")
    );
    // The WebSocket route says it takes an upgrade only.
    let ws = document["paths"]["/api/v1/ws"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let required: BTreeSet<&str> = ws
        .iter()
        .filter(|p| p["required"] == true)
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        BTreeSet::from([
            "Connection",
            "Sec-WebSocket-Key",
            "Sec-WebSocket-Version",
            "Upgrade"
        ])
    );
}

/// Schemathesis found it: serde reads a struct from a JSON array too, so
/// `[null, null]` created a session. Every body is an object; an array is
/// JSON of the wrong shape (422), and nothing is made of it.
#[tokio::test]
async fn an_array_body_is_the_wrong_shape_not_an_object_spelt_by_position() {
    let server = TestServer::start().await;
    let (status, task) = server.post("/tasks", &json!({"title": "t"})).await;
    assert_eq!(status, 201, "{task}");
    let sessions = format!("/tasks/{}/sessions", task["id"].as_str().unwrap());
    let (status, body) = server.post(&sessions, &json!([null, null])).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"].as_str().unwrap().contains("object"), "{body}");
    let (status, body) = server
        .post("/workspaces", &json!(["named by position"]))
        .await;
    assert_eq!(status, 422, "{body}");
    let (_, listed) = server.get("/workspaces").await;
    assert_eq!(listed["workspaces"], json!([]), "{listed}");
    let (_, listed) = server.get(&sessions).await;
    assert_eq!(listed["sessions"], json!([]), "{listed}");
    server.stop().await;
}

/// Issue 45 item 9: what Schemathesis (every check, seeds of its own) found
/// the document not saying. A resume command's program may not be blank
/// (`[""]` was schema-valid, refused "must name a program"); the 422 for
/// two different reasons is declared; a 101 is the WebSocket's answer; and
/// a bundle's ids and texts carry one pattern each, NUL refused in it, not
/// a second under `allOf` that Schemathesis can only filter by (its
/// `filter_too_much` health check failed on `POST /clarification/request`,
/// as it did while the ask was `allOf` of the bundle and its own fields).
#[tokio::test]
async fn the_document_says_what_schemathesis_found_it_did_not() {
    let document = document(false).await;
    let schemas = &document["components"]["schemas"];
    let command = schemas["ResumeTarget"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|v| v["properties"].get("command"))
        .unwrap();
    assert_eq!(command["minItems"], 1, "{command}");
    let program = command["prefixItems"][0]["pattern"].as_str().unwrap();
    assert!(
        program.contains(r"\x00") && program.contains(r"\u3000"),
        "{program}"
    );
    for path in [
        "/api/v1/clarification/{id}/respond",
        "/api/v1/clarification/respond-alike",
    ] {
        let refused = &document["paths"][path]["post"]["responses"]["422"]["description"];
        assert!(
            refused.as_str().unwrap().contains("reject_reason"),
            "{path}: {refused}"
        );
    }
    assert!(document["paths"]["/api/v1/ws"]["get"]["responses"]["101"].is_object());
    // The ask is one object, not `allOf` of the bundle and its own fields.
    let ask = &schemas["Ask"];
    assert!(ask.get("allOf").is_none(), "{ask}");
    for field in ["questions", "session_id", "expires_in_seconds", "attach"] {
        assert!(ask["properties"][field].is_object(), "{field}: {ask}");
    }
    assert_eq!(ask["required"], json!(["questions"]));
    for (schema, field) in [
        ("NewQuestion", "id"),
        ("NewQuestion", "prompt"),
        ("NewOption", "id"),
        ("NewOption", "label"),
    ] {
        let text = &schemas[schema]["properties"][field];
        assert!(text.get("allOf").is_none(), "{schema}.{field}: {text}");
        let pattern = text["pattern"].as_str().unwrap();
        assert!(pattern.contains(r"\x00"), "{schema}.{field}: {pattern}");
    }
}
