//! A waiting bundle as an MCP elicitation form, and the form's content
//! back as a submission (issue 30 item 1). Pure: no I/O, so both eras (a
//! request during the call, or MRTR's `input_required`) share it.
//!
//! The form's fields are named by position (`q1`, `q1_text`, … `decline`,
//! `decline_reason`), not by the agent's question ids, so no id an agent
//! chose can collide with another field.

use clarify_core::runes::MAX_TEXT_RUNES;
use clarify_core::{AnswerInput, ListedQuestion, PendingBundle, Submission};
use rmcp::model::ElicitRequestParams;
use serde_json::{Map, Value, json};

/// The form for `bundle` of the task titled `task`; `problem` says why a
/// previous try was not sent.
#[must_use]
pub fn request(bundle: &PendingBundle, task: &str, problem: Option<&str>) -> ElicitRequestParams {
    let mut properties = Map::new();
    for (i, q) in bundle.questions.iter().enumerate() {
        let n = i + 1;
        if let Some(choice) = choice(q) {
            properties.insert(format!("q{n}"), choice);
        }
        let title = if q.options.is_empty() {
            heading(q).to_owned()
        } else {
            "Or in your own words".to_owned()
        };
        properties.insert(
            format!("q{n}_text"),
            json!({"type": "string", "title": title, "maxLength": MAX_TEXT_RUNES}),
        );
    }
    properties.insert(
        "decline".into(),
        json!({
            "type": "boolean",
            "title": "Decline instead of answering",
            "description": "The agent is told you declined.",
            "default": false,
        }),
    );
    properties.insert(
        "decline_reason".into(),
        json!({"type": "string", "title": "Why you decline (optional)", "maxLength": MAX_TEXT_RUNES}),
    );
    let params = json!({
        "mode": "form",
        "message": message(bundle, task, problem),
        "requestedSchema": {"type": "object", "properties": properties},
    });
    // Every part above is a shape the schema type takes; a failure here
    // would be a bug in this function, caught by its unit test.
    serde_json::from_value(params).expect("a valid elicitation form")
}

/// What the form says above its fields: the task, the agent's context,
/// and each prompt (a field's description may be shown small, or not).
fn message(bundle: &PendingBundle, task: &str, problem: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(problem) = problem {
        out.push_str(&format!("Not sent: {problem}. Please try again.\n\n"));
    }
    out.push_str(&format!("An agent working on \"{task}\" asks:"));
    if !bundle.context.is_empty() {
        out.push_str(&format!("\n\n{}", bundle.context));
    }
    let many = bundle.questions.len() > 1;
    for (i, q) in bundle.questions.iter().enumerate() {
        let prefix = if many {
            format!("{}. ", i + 1)
        } else {
            String::new()
        };
        out.push_str(&format!("\n\n{prefix}{}", q.prompt));
    }
    if !bundle.expires_at.is_empty() {
        out.push_str(&format!("\n\n(It expires at {}.)", bundle.expires_at));
    }
    out
}

fn heading(q: &ListedQuestion) -> &str {
    if q.title.is_empty() {
        &q.prompt
    } else {
        &q.title
    }
}

/// The field choosing among `q`'s options, `None` when it has none.
fn choice(q: &ListedQuestion) -> Option<Value> {
    if q.options.is_empty() {
        return None;
    }
    let options: Vec<Value> = q
        .options
        .iter()
        .map(|o| {
            let title = if o.description.is_empty() {
                o.label.clone()
            } else {
                format!("{} ({})", o.label, o.description)
            };
            json!({"const": o.option_id, "title": title})
        })
        .collect();
    let mut field = if q.multi_select {
        json!({"type": "array", "title": heading(q), "items": {"anyOf": options}})
    } else {
        json!({"type": "string", "title": heading(q), "oneOf": options})
    };
    if !q.default_option_id.is_empty() && !q.multi_select {
        field["default"] = json!(q.default_option_id);
    }
    Some(field)
}

/// A form's content as the submission it stands for, checked later by the
/// one claim like any other (so a wrong option id is named there).
///
/// # Errors
/// A field of the wrong type, named.
pub fn submission(bundle: &PendingBundle, content: &Value) -> Result<Submission, String> {
    let text = |key: &str| -> Result<String, String> {
        match content.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{key}: expected text")),
        }
    };
    if content.get("decline").and_then(Value::as_bool) == Some(true) {
        return Ok(Submission::reject(&text("decline_reason")?));
    }
    let mut answers = Vec::new();
    for (i, q) in bundle.questions.iter().enumerate() {
        let key = format!("q{}", i + 1);
        let selected_options = match content.get(&key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(id)) if id.is_empty() => Vec::new(),
            Some(Value::String(id)) => vec![id.clone()],
            Some(Value::Array(ids)) => ids
                .iter()
                .map(|id| id.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{key}: expected option ids"))?,
            Some(_) => return Err(format!("{key}: expected an option id")),
        };
        answers.push(AnswerInput {
            question_id: q.question_id.clone(),
            selected_options,
            custom_text: text(&format!("{key}_text"))?,
        });
    }
    Ok(Submission::answers(answers))
}

#[cfg(test)]
mod tests {
    use clarify_core::{ListedQuestion, PendingBundle, QuestionOption};
    use serde_json::json;

    use super::{request, submission};

    fn option(id: &str, label: &str) -> QuestionOption {
        QuestionOption {
            option_id: id.into(),
            label: label.into(),
            description: String::new(),
        }
    }

    fn bundle() -> PendingBundle {
        PendingBundle {
            pending_id: "p".into(),
            context: "Migrating billing".into(),
            questions: vec![
                ListedQuestion {
                    question_id: "db".into(),
                    title: "Database".into(),
                    prompt: "Which database?".into(),
                    options: vec![option("db_opt1", "SQLite"), option("db_opt2", "PostgreSQL")],
                    default_option_id: "db_opt2".into(),
                    ..ListedQuestion::default()
                },
                ListedQuestion {
                    question_id: "r".into(),
                    prompt: "Which regions?".into(),
                    multi_select: true,
                    options: vec![option("r_opt1", "eu"), option("r_opt2", "us")],
                    ..ListedQuestion::default()
                },
            ],
            ..PendingBundle::default()
        }
    }

    #[test]
    fn the_form_keeps_question_order_and_offers_each_option_by_its_label() {
        let form = serde_json::to_value(request(&bundle(), "billing", Some("q1: nope"))).unwrap();
        let properties = form["requestedSchema"]["properties"].as_object().unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "q1",
                "q1_text",
                "q2",
                "q2_text",
                "decline",
                "decline_reason"
            ]
        );
        assert_eq!(
            properties["q1"]["oneOf"][1],
            json!({"const": "db_opt2", "title": "PostgreSQL"})
        );
        assert_eq!(properties["q1"]["default"], "db_opt2");
        assert_eq!(properties["q2"]["items"]["anyOf"][0]["title"], "eu");
        assert_eq!(properties["q1_text"]["maxLength"], 2000);
        let message = form["message"].as_str().unwrap();
        assert!(message.starts_with("Not sent: q1: nope."), "{message}");
        for part in [
            "\"billing\"",
            "Migrating billing",
            "1. Which database?",
            "2. Which regions?",
        ] {
            assert!(message.contains(part), "{message}");
        }
    }

    #[test]
    fn content_maps_back_by_position_and_a_decline_wins() {
        let answered = submission(
            &bundle(),
            &json!({"q1": "db_opt1", "q2": ["r_opt1", "r_opt2"], "q2_text": "both", "decline": false}),
        )
        .unwrap();
        assert_eq!(answered.answers[0].question_id, "db");
        assert_eq!(answered.answers[0].selected_options, ["db_opt1"]);
        assert_eq!(answered.answers[1].selected_options, ["r_opt1", "r_opt2"]);
        assert_eq!(answered.answers[1].custom_text, "both");
        let declined = submission(
            &bundle(),
            &json!({"q1": "db_opt1", "decline": true, "decline_reason": "no"}),
        )
        .unwrap();
        assert!(declined.rejected && declined.reject_reason == "no");
        assert_eq!(
            submission(&bundle(), &json!({"q1": 5})).unwrap_err(),
            "q1: expected an option id"
        );
    }
}
