//! Claude Code's `AskUserQuestion` as a Clarify bundle and back: the same
//! questions (header as title, question as prompt), options (label and
//! description) and multi-select, free text allowed as in the agent's own
//! dialog ("Other"); the answer goes back as `updatedInput.answers`, each
//! question's text mapped to the chosen label, several joined with ", "
//! as the dialog joins them, free text as written.

use clarify_core::{NewBundle, NewOption, NewQuestion, RespondBody, Status, validate_new_bundle};
use serde_json::{Map, Value, json};

/// The bundle for `tool_input`.
///
/// # Errors
/// A tool input without questions, or a question without text or options.
pub fn bundle(tool_input: &Value) -> Result<NewBundle, String> {
    let questions = tool_input["questions"]
        .as_array()
        .filter(|q| !q.is_empty())
        .ok_or("AskUserQuestion's input holds no questions")?;
    let questions = questions
        .iter()
        .map(|q| {
            let prompt = q["question"].as_str().unwrap_or_default();
            let options = q["options"].as_array().map_or(&[][..], Vec::as_slice);
            if prompt.trim().is_empty() || options.is_empty() {
                return Err("an AskUserQuestion question has no text or no options".to_owned());
            }
            Ok(NewQuestion {
                title: text(&q["header"]),
                prompt: prompt.to_owned(),
                options: options
                    .iter()
                    .map(|o| NewOption {
                        label: text(&o["label"]),
                        description: text(&o["description"]),
                        ..NewOption::default()
                    })
                    .collect(),
                multi_select: q["multiSelect"].as_bool().unwrap_or(false),
                ..NewQuestion::default()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NewBundle {
        questions,
        ..NewBundle::default()
    })
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// `PreToolUse`'s answer for a settled bundle asked from `tool_input`:
/// allowed with the answers, or denied with the reason the model reads.
#[must_use]
pub fn pre_tool_use(tool_input: &Value, body: &RespondBody) -> Value {
    let specific = match updated_input(tool_input, body) {
        Ok(updated) => json!({"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "updatedInput": updated}),
        Err(reason) => json!({"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": reason}),
    };
    json!({"hookSpecificOutput": specific})
}

/// `PermissionRequest`'s answer (Claude Code's dialog for the same call):
/// allowed with the answers as the tool's input, or denied with the reason.
#[must_use]
pub fn permission_request(tool_input: &Value, body: &RespondBody) -> Value {
    let decision = match updated_input(tool_input, body) {
        Ok(updated) => json!({"behavior": "allow", "updatedInput": updated}),
        Err(reason) => json!({"behavior": "deny", "message": reason}),
    };
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// The tool's input with `answers`, or why there are none.
fn updated_input(tool_input: &Value, body: &RespondBody) -> Result<Value, String> {
    let response = &body.response;
    if response.rejected {
        return Err(super::declined(&response.reject_reason));
    }
    if body.status == Status::Expired && response.answers.is_empty() {
        return Err(super::NO_ANSWER_IN_TIME.to_owned());
    }
    let asked = tool_input["questions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let spec = bundle(tool_input)
        .ok()
        .and_then(|b| validate_new_bundle(&b).ok());
    let stored = spec.as_ref().map_or(&[][..], |s| s.questions.as_slice());
    let mut answers = Map::new();
    for answer in &response.answers {
        let Some(n) = stored
            .iter()
            .position(|q| q.question_id == answer.question_id)
        else {
            continue;
        };
        let mut chosen: Vec<String> = answer
            .selected_options
            .iter()
            .filter_map(|id| stored[n].option_label(id).map(str::to_owned))
            .collect();
        if !answer.custom_text.is_empty() {
            chosen.push(answer.custom_text.clone());
        }
        let key = asked
            .get(n)
            .map(|q| text(&q["question"]))
            .unwrap_or_default();
        answers.insert(key, Value::from(chosen.join(", ")));
    }
    let mut updated = tool_input.clone();
    updated["answers"] = Value::Object(answers);
    Ok(updated)
}

/// What the person chose at the terminal, from a `PostToolUse` report of
/// `AskUserQuestion`, as a submission for the bundle asked from the same
/// input: each answer's labels matched to option ids, the rest as text.
/// `None` when the report carries no answers.
#[must_use]
pub fn submission(tool_input: &Value, tool_response: &Value) -> Option<Value> {
    let given = [&tool_response["answers"], &tool_input["answers"]]
        .into_iter()
        .find_map(Value::as_object)?;
    let asked = tool_input["questions"].as_array()?;
    let spec = validate_new_bundle(&bundle(tool_input).ok()?).ok()?;
    let answers: Vec<Value> = spec
        .questions
        .iter()
        .zip(asked)
        .map(|(question, raw)| {
            let said = given
                .get(raw["question"].as_str().unwrap_or_default())
                .map(answer_text)
                .unwrap_or_default();
            let id_of = |label: &str| {
                let label = label.trim();
                question
                    .options
                    .iter()
                    .find(|o| o.label == label)
                    .map(|o| o.option_id.clone())
            };
            // A whole label first (labels may hold ", "), else each part.
            let (selected, rest): (Vec<String>, Vec<&str>) = match id_of(&said) {
                Some(id) => (vec![id], Vec::new()),
                None => {
                    let parts: Vec<&str> =
                        said.split(", ").filter(|p| !p.trim().is_empty()).collect();
                    let selected = parts.iter().filter_map(|p| id_of(p)).collect();
                    let rest = parts.into_iter().filter(|p| id_of(p).is_none()).collect();
                    (selected, rest)
                }
            };
            json!({"question_id": question.question_id,
                   "selected_options": selected, "custom_text": rest.join(", ")})
        })
        .collect();
    Some(json!({"answers": answers}))
}

fn answer_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}
