//! What the types alone cannot say about what the server takes (issue 27
//! item 8), added to the generated document: the shape of a page's `limit`
//! and `cursor`, a webhook URL and a resume command the server will take,
//! bodies flattened for generators, and the headers of a WebSocket upgrade.
//! No NUL in any text, and a body that may be absent never `null`:
//! [`super::nul`].

use serde_json::{Value, json};

/// What `str::trim` removes (Rust's `char::is_whitespace`), as the body of
/// a regex class: the server trims text before it judges it.
const WHITESPACE: &str = r"\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// A page `cursor` the server takes: empty (the first page), or one it
/// issued (`next_cursor`), trimmed. Its form is base64url of
/// `v1:<created_at>:<id>` ([`clarify_core::Cursor`]); this pattern admits
/// every cursor the server issues (`created_at` of 1 to 18 digits, ids of
/// bytes 0x20–0x3F and 0x60–0x7F, which hold every UUID) and no text it
/// refuses. Derived, not written: e2e/contract/cursor_pattern.py prints
/// it, and the contract test refuses a document whose pattern differs.
const CURSOR_PATTERN: &str = r"^[\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]*(?:djE6(?:(?:O[DT][AEIMQUYcgk][0-5w-z]|[MN][DTjz][AEIMQUYcgk][0-5w-z]){0,5}(?:O[DT][AEIMQUYcgk]6|[MN][DTjz][AEIMQUYcgk]6)(?:(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])+|(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])*(?:[I-PYZa-f][AQgw]|[I-PYZa-f][23CDGHSTWXijmnyz][048AEIMQUYcgkosw]))|(?:O[DT][AEIMQUYcgk][0-5w-z]|[MN][DTjz][AEIMQUYcgk][0-5w-z]){0,5}(?:O[DT][op][\-0-9_g-z]|[MN][DTjz][op][\-0-9_g-z])(?:(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])*|(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])*(?:[I-PYZa-f][AQgw]|[I-PYZa-f][23CDGHSTWXijmnyz][048AEIMQUYcgkosw]))|(?:O[DT][AEIMQUYcgk][0-5w-z]|[MN][DTjz][AEIMQUYcgk][0-5w-z]){1,6}(?:O[ijmn][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z](?:(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])*|(?:[I-PYZa-f][23CDGHSTWXijmnyz][014589ABEFIJMNQRUVYZcdghklopstwx][\-0-9_g-z])*(?:[I-PYZa-f][AQgw]|[I-PYZa-f][23CDGHSTWXijmnyz][048AEIMQUYcgkosw]))|O[ijmn][048AEIMQUYcgkosw])))?[\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]*$";

/// `?limit=` and `?cursor=` of every paged list, as the server reads them
/// ([`super::super::extract::page_limit`], [`clarify_core::Cursor::decode`]).
pub(super) fn pages(document: &mut Value) {
    let Some(paths) = document["paths"].as_object_mut() else {
        return;
    };
    let parameters = paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
        .filter_map(|operation| operation.get_mut("parameters"))
        .filter_map(Value::as_array_mut)
        .flatten()
        .filter(|parameter| parameter["in"] == "query");
    for parameter in parameters {
        let name = parameter["name"].as_str().map(str::to_owned);
        match name.as_deref() {
            Some("limit") => {
                // An empty `limit=` reads as absent.
                parameter["schema"] = json!({"anyOf": [
                    {"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX},
                    {"type": "string", "maxLength": 0},
                ]});
                parameter["description"] = json!(
                    "Page size: default 50 (also when absent, empty or below 1), at most 200 \
                     (a larger one is clamped, L10)"
                );
            }
            Some("cursor") => {
                parameter["schema"] = json!({"type": "string", "pattern": CURSOR_PATTERN});
                parameter["description"] = json!(
                    "The previous page's `next_cursor`, exactly as returned (opaque); empty or \
                     absent for the first page. Any other text is refused (400, L13)."
                );
            }
            // Trimmed, then one of a few words; empty reads as absent.
            Some("order") => {
                parameter["schema"] = json!({"type": "string",
                    "pattern": format!("^[{WHITESPACE}]*(?:oldest|newest)?[{WHITESPACE}]*$")});
            }
            Some("waiting") => {
                parameter["schema"] = json!({"type": "string",
                    "pattern": format!("^[{WHITESPACE}]*(?:true|false)?[{WHITESPACE}]*$")});
            }
            Some("format") => {
                parameter["schema"] = json!({"type": "string",
                    "pattern": format!("^[{WHITESPACE}]*(?:jsonl|csv)?[{WHITESPACE}]*$")});
            }
            Some("days") => {
                // The Activity figures' span; empty reads as absent.
                parameter["schema"] = json!({"anyOf": [
                    {"type": "integer", "minimum": 1, "maximum": crate::activity::MAX_DAYS},
                    {"type": "string", "maxLength": 0},
                ]});
            }
            Some("created_since" | "since" | "until") => {
                // Empty reads as absent; anything else must parse (L13).
                parameter["schema"] = json!({"anyOf": [
                    {"type": "string", "format": "date-time"},
                    {"type": "string", "maxLength": 0},
                ]});
            }
            _ => {}
        }
    }
}

/// The webhook URLs the server takes: its own check's pattern (the network
/// policy may still refuse an address, a 400 no schema can foresee).
const URL: &str = crate::resume::WEBHOOK_URL_PATTERN;

/// The webhook URLs of a resume target and of a workspace's notices.
pub(super) fn webhook_urls(document: &mut Value) {
    let schemas = &mut document["components"]["schemas"];
    if let Some(variants) = schemas
        .pointer_mut("/ResumeTarget/oneOf")
        .and_then(Value::as_array_mut)
    {
        for variant in variants {
            // Untagged and strict: a variant takes its own key and no other.
            variant["additionalProperties"] = json!(false);
            if variant["properties"].get("webhook_url").is_some() {
                variant["properties"]["webhook_url"]["pattern"] = json!(format!("^{URL}$"));
            }
        }
    }
    if let Some(notify) = schemas.pointer_mut("/SetWorkspaceNotify/properties/webhook_url") {
        // Trimmed first; empty (or `null`) stops the notices.
        notify["pattern"] = json!(format!("^[{WHITESPACE}]*(?:{URL})?[{WHITESPACE}]*$"));
    }
}

/// A resume command names its program first: at least one item, the first
/// not blank ("resume.command: must name a program" otherwise); the
/// arguments after it may be anything without NUL.
pub(super) fn resume_commands(document: &mut Value) {
    let Some(variants) = document
        .pointer_mut("/components/schemas/ResumeTarget/oneOf")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for variant in variants {
        if let Some(command) = variant.pointer_mut("/properties/command") {
            command["minItems"] = json!(1);
            command["prefixItems"] = json!([{
                "type": "string",
                "description": "The program, by its full path",
                "pattern": format!(r"^[^\x00]*[^{WHITESPACE}\x00][^\x00]*$"),
            }]);
        }
    }
}

/// A request body made of another with fields added (serde's `flatten`,
/// `Ask` = `NewBundle` + its own) as one object: Schemathesis generated
/// `allOf: [$ref, {…}]` from one part and filtered by the other, and so
/// little of it passed that `POST /clarification/request` failed its
/// `filter_too_much` health check with most seeds (issue 45 item 9).
pub(super) fn flatten_bodies(document: &mut Value) {
    let mut bodies = std::collections::BTreeSet::new();
    if let Some(paths) = document["paths"].as_object() {
        for operation in paths.values().filter_map(Value::as_object) {
            for operation in operation.values() {
                let schema = operation.pointer("/requestBody/content/application~1json/schema");
                if let Some(name) = schema
                    .and_then(|s| s["$ref"].as_str())
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    bodies.insert(name.to_owned());
                }
            }
        }
    }
    let schemas = &mut document["components"]["schemas"];
    for name in bodies {
        if let Some(flat) = flattened(schemas, &schemas[&name]) {
            schemas[&name] = flat;
        }
    }
}

/// `schema`, an `allOf` of a component and one object, as one object.
fn flattened(schemas: &Value, schema: &Value) -> Option<Value> {
    let [base, own] = schema.get("allOf")?.as_array()?.as_slice() else {
        return None;
    };
    let base = base["$ref"]
        .as_str()?
        .strip_prefix("#/components/schemas/")?;
    let mut flat = schemas.get(base)?.clone();
    if flat["type"] != "object" || own["type"] != "object" {
        return None;
    }
    for (key, value) in own["properties"].as_object()? {
        flat["properties"][key] = value.clone();
    }
    if let Some(required) = own["required"].as_array() {
        let mut all = flat["required"].as_array().cloned().unwrap_or_default();
        all.extend(required.iter().cloned());
        flat["required"] = Value::Array(all);
    }
    if let Some(description) = schema.get("description") {
        flat["description"] = description.clone();
    }
    Some(flat)
}

/// `respond-alike` names each bundle once: a repeat is a 400 (issue 29).
pub(super) fn alike_ids(document: &mut Value) {
    if let Some(ids) =
        document.pointer_mut("/components/schemas/RespondAlike/properties/pending_ids")
    {
        ids["uniqueItems"] = json!(true);
    }
}

/// `GET /ws` takes a WebSocket upgrade only (axum's `WebSocketUpgrade`):
/// anything else is a 400 naming what is missing.
pub(super) fn websocket(document: &mut Value) {
    let Some(operation) = document.pointer_mut("/paths/~1api~1v1~1ws/get") else {
        return;
    };
    let header = |name: &str, schema: Value, description: &str| {
        json!({
            "name": name, "in": "header", "required": true,
            "description": description, "schema": schema,
        })
    };
    let matching = |pattern: &str| json!({"type": "string", "pattern": pattern});
    operation["parameters"] = json!([
        header(
            "Connection",
            matching(r"^[\t -~]*[Uu][Pp][Gg][Rr][Aa][Dd][Ee][\t -~]*$"),
            "Names `upgrade` (any case)",
        ),
        header(
            "Upgrade",
            matching("^[Ww][Ee][Bb][Ss][Oo][Cc][Kk][Ee][Tt]$"),
            "`websocket` (any case)",
        ),
        header("Sec-WebSocket-Version", matching("^13$"), "`13`"),
        header(
            "Sec-WebSocket-Key",
            json!({"type": "string"}),
            "The client's nonce (RFC 6455)",
        ),
    ]);
}
