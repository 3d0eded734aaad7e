//! No NUL in any text of a request body (issue 27 item 8, issue 45 item
//! 9), said in the generated document: [`super::super::json`] refuses the
//! character anywhere in a body, keys included, since PostgreSQL cannot
//! store it. Each text's own pattern says it, its `maxLength` too, so a
//! generator never has to filter what it made (Schemathesis's
//! `filter_too_much`).

use serde_json::{Value, json};

/// A string without U+0000: [`super::super::json::decode`] refuses the NUL
/// character anywhere in a body, keys included (PostgreSQL cannot store it).
const NO_NUL: &str = r"^[^\x00]*$";

/// The schema of JSON that holds no NUL: what a body's unknown keys may
/// carry where they are ignored.
const JSON_WITHOUT_NUL: &str = "JsonWithoutNul";

/// Every schema a request body reaches says that its texts and keys hold
/// no NUL, and an object that ignores unknown keys says they hold none
/// either. A body that may be absent (`Option<T>`) is documented as `T`
/// not required: a `null` body is refused like any other wrong shape.
pub(super) fn refuse_nul(document: &mut Value) {
    let mut reached = std::collections::BTreeSet::new();
    if let Some(paths) = document["paths"].as_object_mut() {
        for operation in paths.values_mut().filter_map(Value::as_object_mut) {
            for operation in operation.values_mut() {
                let Some(body) = operation.get_mut("requestBody") else {
                    continue;
                };
                for media in body["content"]
                    .as_object_mut()
                    .into_iter()
                    .flat_map(|content| content.values_mut())
                {
                    let schema = &mut media["schema"];
                    if let Some(only) = without_null(schema) {
                        *schema = only;
                    }
                    refs(schema, &mut reached);
                    no_nul(schema);
                }
            }
        }
    }
    let schemas = &mut document["components"]["schemas"];
    let mut pending: Vec<String> = reached.iter().cloned().collect();
    while let Some(name) = pending.pop() {
        let mut more = std::collections::BTreeSet::new();
        refs(&schemas[&name], &mut more);
        for found in more {
            if reached.insert(found.clone()) {
                pending.push(found);
            }
        }
    }
    for name in &reached {
        if let Some(schema) = schemas.get_mut(name) {
            no_nul(schema);
        }
    }
    // Said in words, not as a recursive schema (`anyOf` of scalars and
    // containers of itself): Schemathesis's generator cannot bound a
    // recursive `$ref`, and the bundles it drew for a body's many ignored
    // keys outgrew its buffer (its `filter_too_much` health check, issue 45
    // item 9, a third of runs). A schema of `true` it draws small.
    schemas[JSON_WITHOUT_NUL] = json!({
        "description": "Any JSON value, ignored. Like every other string and key of a \
            request body, its own may not hold U+0000: the body is refused (400).",
    });
}

/// `oneOf: [X, {type: null}]` as `X`.
fn without_null(schema: &Value) -> Option<Value> {
    let branches = schema.get("oneOf")?.as_array()?;
    let rest: Vec<&Value> = branches
        .iter()
        .filter(|b| b.get("type") != Some(&json!("null")))
        .collect();
    (rest.len() == 1 && branches.len() == 2).then(|| rest[0].clone())
}

/// The component names `schema` refers to.
fn refs(schema: &Value, found: &mut std::collections::BTreeSet<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
            {
                found.insert(name.to_owned());
            }
            for value in map.values() {
                refs(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, found)),
        _ => {}
    }
}

/// `schema` and what it holds, NUL refused (see [`refuse_nul`]).
fn no_nul(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let (string, object) = (types.contains(&"string"), types.contains(&"object"));
    if string {
        match map
            .get("pattern")
            .and_then(Value::as_str)
            .map(pattern_without_nul)
        {
            Some(Some(one)) => {
                map.insert("pattern".into(), json!(one));
            }
            Some(None) => {
                map.insert("allOf".into(), json!([{"pattern": NO_NUL}]));
            }
            None => {
                map.insert("pattern".into(), json!(NO_NUL));
            }
        }
        bound_length(map);
    }
    if object {
        map.insert("propertyNames".into(), json!({"pattern": NO_NUL}));
        if !map.contains_key("additionalProperties") {
            map.insert(
                "additionalProperties".into(),
                json!({"$ref": format!("#/components/schemas/{JSON_WITHOUT_NUL}")}),
            );
        }
    }
    for key in ["properties", "$defs"] {
        if let Some(children) = map.get_mut(key).and_then(Value::as_object_mut) {
            children.values_mut().for_each(no_nul);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            no_nul(child);
        }
    }
    for key in ["oneOf", "anyOf", "allOf", "prefixItems"] {
        if let Some(children) = map.get_mut(key).and_then(Value::as_array_mut) {
            children.iter_mut().for_each(no_nul);
        }
    }
}

/// `pattern` that also refuses NUL, as one pattern, where its form allows:
/// two patterns (one of them under `allOf`) are generated by Schemathesis
/// from one and filtered by the other, and a bundle's many ids and texts
/// filtered so let too few examples through (its `filter_too_much` health
/// check, issue 45 item 9). `None`: keep both.
fn pattern_without_nul(pattern: &str) -> Option<String> {
    if pattern.contains(r"\x00") || pattern.contains(r"\u0000") {
        // Written to refuse it already.
        return Some(pattern.to_owned());
    }
    // `^\S{m,n}$`: that many characters, none of them space (nor NUL).
    if let Some(count) = pattern
        .strip_prefix(r"^\S{")
        .and_then(|rest| rest.strip_suffix("}$"))
        .filter(|count| count.chars().all(|c| c.is_ascii_digit() || c == ','))
    {
        return Some(format!(r"^[^\s\x00]{{{count}}}$"));
    }
    // `[^…]`, unanchored: holds one character outside the class (a text
    // that is not only white space); now none of them NUL.
    let class = pattern.strip_prefix("[^")?.strip_suffix(']')?;
    (!class.contains(']')).then(|| format!(r"^[^\x00]*[^{class}\x00][^\x00]*$"))
}

/// A text of `^[^…]*$` with a `maxLength`: the bounds in the pattern too
/// (`^[^…]{0,64}$`), which then generates only texts of a length allowed,
/// where Schemathesis filtered the longer ones out (issue 45 item 9).
fn bound_length(map: &mut serde_json::Map<String, Value>) {
    let Some(max) = map.get("maxLength").and_then(Value::as_u64) else {
        return;
    };
    let min = map.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let Some(class) = map
        .get("pattern")
        .and_then(Value::as_str)
        .and_then(|p| p.strip_prefix("^[^")?.strip_suffix("]*$"))
        .filter(|class| !class.contains(']'))
    else {
        return;
    };
    let bounded = format!("^[^{class}]{{{min},{max}}}$");
    map.insert("pattern".into(), json!(bounded));
}

#[cfg(test)]
mod tests {
    use super::pattern_without_nul;

    #[test]
    fn a_pattern_and_no_nul_become_one_pattern_where_they_can() {
        assert_eq!(
            pattern_without_nul(r"^\S{0,64}$").as_deref(),
            Some(r"^[^\s\x00]{0,64}$")
        );
        assert_eq!(
            pattern_without_nul(r"[^\t ]").as_deref(),
            Some(r"^[^\x00]*[^\t \x00][^\x00]*$")
        );
        let written = r"^[^\u0000-\u001F]*$";
        assert_eq!(pattern_without_nul(written).as_deref(), Some(written));
        assert_eq!(pattern_without_nul("^https?://.*$"), None, "kept apart");
    }

    #[test]
    fn a_bounded_text_says_its_bounds_in_its_pattern_too() {
        let mut text = serde_json::json!({"type": "string", "maxLength": 64});
        super::no_nul(&mut text);
        assert_eq!(text["pattern"], r"^[^\x00]{0,64}$");
        let mut open = serde_json::json!({"type": "string"});
        super::no_nul(&mut open);
        assert_eq!(open["pattern"], r"^[^\x00]*$");
    }
}
