//! Bundle creation: counts, lengths, ids.

use super::*;
use alloc::string::ToString;
use alloc::vec;

fn option(label: &str) -> NewOption {
    NewOption {
        label: label.to_string(),
        ..NewOption::default()
    }
}

fn question(prompt: &str, labels: &[&str]) -> NewQuestion {
    NewQuestion {
        prompt: prompt.to_string(),
        options: labels.iter().map(|l| option(l)).collect(),
        ..NewQuestion::default()
    }
}

fn bundle(questions: Vec<NewQuestion>) -> NewBundle {
    NewBundle {
        questions,
        ..NewBundle::default()
    }
}

#[test]
fn assigns_question_and_option_ids() {
    let spec = validate_new_bundle(&bundle(vec![
        question("Which DB?", &["SQLite", "Postgres"]),
        question("Which port?", &["80", "443", "8080"]),
    ]))
    .unwrap();
    assert_eq!(spec.questions[0].question_id, "q1");
    assert_eq!(spec.questions[1].question_id, "q2");
    assert_eq!(spec.questions[1].options[2].option_id, "q2_opt3");
    assert_eq!(spec.questions[0].options[1].label, "Postgres");
}

#[test]
fn generated_ids_avoid_explicit_ones() {
    let mut second = question("B?", &["x", "y"]);
    second.id = "q1".to_string();
    let spec = validate_new_bundle(&bundle(vec![question("A?", &["x", "y"]), second])).unwrap();
    assert_eq!(spec.questions[1].question_id, "q1");
    assert_eq!(spec.questions[0].question_id, "q2");
    assert_eq!(spec.questions[0].options[0].option_id, "q2_opt1");
}

#[test]
fn question_count_is_one_to_four() {
    let err = validate_new_bundle(&bundle(vec![])).unwrap_err();
    assert_eq!(err, CreateError::QuestionCount { got: 0 });
    let five = (0..5).map(|_| question("?", &["a", "b"])).collect();
    assert_eq!(
        validate_new_bundle(&bundle(five))
            .unwrap_err()
            .field()
            .as_str(),
        "questions"
    );
    let four = (0..4).map(|_| question("?", &["a", "b"])).collect();
    assert!(validate_new_bundle(&bundle(four)).is_ok());
}

#[test]
fn option_count_is_two_to_six() {
    let one = validate_new_bundle(&bundle(vec![question("?", &["a"])])).unwrap_err();
    assert_eq!(one.field().as_str(), "questions[0].options");
    let seven = ["a", "b", "c", "d", "e", "f", "g"];
    let err = validate_new_bundle(&bundle(vec![question("?", &seven)])).unwrap_err();
    assert!(
        err.to_string().starts_with("questions[0].options: "),
        "{err}"
    );
    assert!(validate_new_bundle(&bundle(vec![question("?", &seven[..6])])).is_ok());
}

#[test]
fn prompt_and_label_are_required() {
    let err = validate_new_bundle(&bundle(vec![question("  ", &["a", "b"])])).unwrap_err();
    assert_eq!(err.field().as_str(), "questions[0].prompt");
    let err = validate_new_bundle(&bundle(vec![
        question("?", &["a", "b"]),
        question("?", &["a", ""]),
    ]))
    .unwrap_err();
    assert_eq!(err.field().as_str(), "questions[1].options[1].label");
}

#[test]
fn duplicate_ids_are_rejected_and_named() {
    let mut a = question("A?", &["x", "y"]);
    a.id = "same".to_string();
    let mut b = question("B?", &["x", "y"]);
    b.id = " same ".to_string();
    let err = validate_new_bundle(&bundle(vec![a, b])).unwrap_err();
    assert_eq!(err.field().as_str(), "questions[1].id");

    let mut q = question("A?", &["x", "y"]);
    q.options[0].id = "o".to_string();
    q.options[1].id = "o".to_string();
    let err = validate_new_bundle(&bundle(vec![q])).unwrap_err();
    assert_eq!(err.field().as_str(), "questions[0].options[1].id");
}

#[test]
fn ids_with_spaces_are_invalid() {
    let mut q = question("A?", &["x", "y"]);
    q.id = "a b".to_string();
    let err = validate_new_bundle(&bundle(vec![q])).unwrap_err();
    assert!(matches!(err, CreateError::InvalidId { .. }));
}

#[test]
fn context_paragraphs_join_with_blank_lines() {
    let mut b = bundle(vec![question("?", &["a", "b"])]);
    b.context_paragraphs = vec!["one".to_string(), " ".to_string(), "two".to_string()];
    assert_eq!(validate_new_bundle(&b).unwrap().context, "one\n\ntwo");
    b.context = "both".to_string();
    assert_eq!(
        validate_new_bundle(&b).unwrap_err(),
        CreateError::TwoContexts
    );
}

#[test]
fn deserializes_null_as_absent_and_accepts_id_aliases() {
    let b: NewBundle = serde_json::from_str(
        r#"{"questions":[{"question_id":"db","title":null,"prompt":"P",
            "options":[{"option_id":"a","label":"A","description":null},{"label":"B"}]}],
            "context":null}"#,
    )
    .unwrap();
    let spec = validate_new_bundle(&b).unwrap();
    assert_eq!(spec.questions[0].question_id, "db");
    assert_eq!(spec.questions[0].options[0].option_id, "a");
    assert_eq!(spec.questions[0].options[1].option_id, "db_opt2");
}

#[test]
fn a_default_names_an_option_of_its_own_question() {
    let mut q = question("?", &["a", "b"]);
    q.default_option_id = " q1_opt2 ".to_string();
    let spec = validate_new_bundle(&bundle(vec![q.clone()])).unwrap();
    assert_eq!(spec.questions[0].default_option_id, "q1_opt2");
    q.default_option_id = "q2_opt1".to_string();
    let err = validate_new_bundle(&bundle(vec![q])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "questions[0].default_option_id: \"q2_opt1\" is not one of the question's option ids"
    );
}

#[test]
fn an_assignee_is_judged_as_sent_then_trimmed() {
    use super::check_assignee;
    assert_eq!(check_assignee(" bob\u{2002}").unwrap(), "bob");
    assert_eq!(check_assignee("").unwrap(), "");
    // A tab is a control character, even where a trim would drop it: the
    // contract's pattern refuses it, so the server does too.
    for bad in ["\tbob".to_owned(), "bo\u{81}b".to_owned(), "x".repeat(65)] {
        let err = check_assignee(&bad).unwrap_err();
        assert_eq!(err.field().to_string(), "assignee", "{bad:?}");
    }
    // 64 characters as sent, surrounding spaces included.
    assert!(check_assignee(&format!(" {} ", "x".repeat(63))).is_err());
    assert!(check_assignee(&"x".repeat(64)).is_ok());
}
