//! The spec's verification boundaries for every core rule, through the public
//! API. This same file runs natively and compiled to wasm32 (under
//! wasm-bindgen-test), proving the server's and the browser's builds agree.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use clarify_core::{
    Answer, AnswerInput, ClarificationMetadata, NewBundle, Outcome, Question, RespondBody, Status,
    StoredMessage, Submission, SubmissionError, agent_text, sort_d2, validate_new_bundle,
    validate_submission, winner,
};
use serde_json::Value;

/// Two questions: q1 with three options, q2 with two.
fn questions() -> Vec<Question> {
    let bundle: NewBundle = serde_json::from_str(
        r#"{"questions": [
            {"prompt": "Which database?", "options": [
                {"label": "SQLite"}, {"label": "PostgreSQL"}, {"label": "Both"}]},
            {"prompt": "Ship today?", "options": [{"label": "Yes"}, {"label": "No"}]}
        ]}"#,
    )
    .unwrap();
    validate_new_bundle(&bundle).unwrap().questions
}

fn entry(question_id: &str, options: &[&str], text: &str) -> AnswerInput {
    AnswerInput {
        question_id: question_id.to_string(),
        selected_options: options.iter().map(|o| (*o).to_string()).collect(),
        custom_text: text.to_string(),
    }
}

fn submit(answers: Vec<AnswerInput>) -> Result<Outcome, SubmissionError> {
    validate_submission(&questions(), &Submission::answers(answers))
}

fn field_of(result: Result<Outcome, SubmissionError>) -> String {
    let err = result.expect_err("submission should be refused");
    let field = err.field().to_string();
    assert!(
        err.to_string().starts_with(&format!("{field}: ")),
        "message names the field: {err}"
    );
    field
}

// ---- No NUL (U+0000) in any text: both database backends store the same ----

#[test]
fn texts_with_a_nul_character_are_refused_naming_the_field() {
    let result = submit(vec![entry("q1", &[], "a\0b"), entry("q2", &[], "")]);
    assert_eq!(field_of(result), "answers[0].custom_text");
    let err = validate_submission(&questions(), &Submission::reject("why\0")).unwrap_err();
    assert_eq!(err.field().to_string(), "reject_reason");
    for (json, field) in [
        (
            r#"{"questions": [{"prompt": "a\u0000", "options": [{"label": "x"}, {"label": "y"}]}]}"#,
            "questions[0].prompt",
        ),
        (
            r#"{"questions": [{"prompt": "p", "options": [{"label": "x"}, {"label": "y", "description": "\u0000"}]}]}"#,
            "questions[0].options[1].description",
        ),
        (
            r#"{"context": "c\u0000", "questions": [{"prompt": "p", "options": [{"label": "x"}, {"label": "y"}]}]}"#,
            "context",
        ),
    ] {
        let bundle: NewBundle = serde_json::from_str(json).unwrap();
        let err = validate_new_bundle(&bundle).unwrap_err();
        assert_eq!(err.field().to_string(), field, "{err}");
        assert!(err.to_string().contains("NUL"), "{err}");
    }
}

// ---- N8b: 2000 runes accepted, 2001 rejected, counted over code points ----

#[test]
fn n8b_custom_text_2000_multibyte_runes_accepted_2001_rejected() {
    let at = "本".repeat(2000); // 6000 bytes: a byte count would refuse it
    assert!(submit(vec![entry("q1", &[], &at), entry("q2", &[], "")]).is_ok());
    let over = "本".repeat(2001);
    let result = submit(vec![entry("q1", &[], ""), entry("q2", &[], &over)]);
    assert_eq!(field_of(result), "answers[1].custom_text");
}

#[test]
fn n8b_custom_text_counts_astral_characters_once() {
    let at = "😀".repeat(2000); // 4000 UTF-16 units: maxLength=2000 would stop at 1000
    assert!(submit(vec![entry("q1", &[], &at), entry("q2", &[], "")]).is_ok());
    let over = "😀".repeat(2001);
    assert!(matches!(
        submit(vec![entry("q1", &[], &over), entry("q2", &[], "")]),
        Err(SubmissionError::TooLong { runes: 2001, .. })
    ));
}

#[test]
fn n8b_reject_reason_2000_accepted_2001_rejected() {
    let at = "本".repeat(1999) + "😀";
    let outcome = validate_submission(&questions(), &Submission::reject(&at)).unwrap();
    assert_eq!(outcome, Outcome::Rejected { reason: at });
    let over = "😀".repeat(2001);
    let err = validate_submission(&questions(), &Submission::reject(&over)).unwrap_err();
    assert_eq!(err.field().to_string(), "reject_reason");
}

#[test]
fn n3a_rule3_length_is_checked_before_trimming() {
    let raw = "a".repeat(2000) + " ";
    let result = submit(vec![entry("q1", &[], &raw), entry("q2", &[], "")]);
    assert_eq!(field_of(result), "answers[0].custom_text");
    let reason = format!(" {} ", "b".repeat(1999));
    assert!(validate_submission(&questions(), &Submission::reject(&reason)).is_err());
}

// ---- N6: each condition alone ----

#[test]
fn n6_1_one_entry_per_question() {
    let result = submit(vec![entry("q1", &["q1_opt1"], "")]);
    assert_eq!(field_of(result), "answers");
    let result = submit(vec![
        entry("q1", &[], "a"),
        entry("q2", &[], "b"),
        entry("q2", &[], "c"),
    ]);
    assert!(matches!(
        result,
        Err(SubmissionError::AnswerCount {
            expected: 2,
            got: 3
        })
    ));
}

#[test]
fn n6_2_empty_question_id() {
    let result = submit(vec![entry("q1", &[], "a"), entry("", &[], "b")]);
    assert_eq!(field_of(result), "answers[1].question_id");
}

#[test]
fn n6_3_unknown_question_id() {
    let result = submit(vec![entry("q1", &[], "a"), entry("q9", &[], "b")]);
    assert!(
        matches!(&result, Err(SubmissionError::UnknownQuestion { question_id, .. }) if question_id == "q9")
    );
    assert_eq!(field_of(result), "answers[1].question_id");
}

#[test]
fn n6_4_repeated_question_id() {
    let result = submit(vec![entry("q2", &[], "a"), entry("q2", &[], "b")]);
    assert!(matches!(
        result,
        Err(SubmissionError::DuplicateQuestion { .. })
    ));
    assert_eq!(
        field_of(submit(vec![entry("q2", &[], "a"), entry("q2", &[], "b")])),
        "answers[1].question_id"
    );
}

#[test]
fn n8a_empty_answers_without_rejection_is_a_count_mismatch() {
    let one = &questions()[..1];
    let err = validate_submission(one, &Submission::default()).unwrap_err();
    assert_eq!(
        err,
        SubmissionError::AnswerCount {
            expected: 1,
            got: 0
        }
    );
}

#[test]
fn n6a_expected_set_is_one_per_stored_question() {
    let one = &questions()[1..];
    assert!(
        validate_submission(
            one,
            &Submission::answers(vec![entry("q2", &["q2_opt1"], "")])
        )
        .is_ok()
    );
    let err =
        validate_submission(one, &Submission::answers(vec![entry("q1", &[], "x")])).unwrap_err();
    assert!(matches!(err, SubmissionError::UnknownQuestion { .. }));
}

// ---- N7, N8, N8a ----

#[test]
fn n7_an_entry_with_neither_field_is_accepted() {
    let outcome = submit(vec![entry("q1", &[], ""), entry("q2", &[], "   ")]).unwrap();
    assert_eq!(
        outcome.answers()[1],
        Answer {
            question_id: "q2".into(),
            ..Answer::default()
        }
    );
    let summary = agent_text::answer_summary(&questions(), &outcome);
    assert_eq!(summary, "A1: (no answer)\nA2: (no answer)");
}

#[test]
fn n8_unknown_option_rejected_and_named() {
    let result = submit(vec![
        entry("q1", &["q1_opt1", "q2_opt1"], ""),
        entry("q2", &[], ""),
    ]);
    assert_eq!(field_of(result), "answers[0].selected_options[1]");
}

#[test]
fn n8_several_valid_options_are_accepted() {
    let outcome = submit(vec![
        entry("q1", &["q1_opt3", "q1_opt1"], ""),
        entry("q2", &[], ""),
    ])
    .unwrap();
    assert_eq!(
        outcome.answers()[0].selected_options,
        ["q1_opt1", "q1_opt3"]
    );
}

#[test]
fn n8a_rejected_with_answers_is_refused() {
    let submission = Submission {
        answers: vec![entry("q1", &[], "a")],
        rejected: true,
        reject_reason: String::new(),
    };
    let err = validate_submission(&questions(), &submission).unwrap_err();
    assert_eq!(err, SubmissionError::RejectedWithAnswers);
    assert_eq!(err.field().to_string(), "answers");
}

#[test]
fn a_reason_without_rejection_is_refused() {
    let submission = Submission {
        answers: vec![entry("q1", &[], "a"), entry("q2", &[], "b")],
        rejected: false,
        reject_reason: "because".to_string(),
    };
    let err = validate_submission(&questions(), &submission).unwrap_err();
    assert_eq!(err.field().to_string(), "reject_reason");
}

// ---- L16 ----

#[test]
fn l16_a_question_without_id_makes_the_bundle_unanswerable() {
    let mut qs = questions();
    qs[1].question_id.clear();
    let answer = Submission::answers(vec![entry("q1", &[], "a"), entry("", &[], "b")]);
    assert_eq!(
        validate_submission(&qs, &answer),
        Err(SubmissionError::UnanswerableBundle)
    );
    assert_eq!(
        validate_submission(&qs, &Submission::reject("")),
        Err(SubmissionError::UnanswerableBundle)
    );
    assert_eq!(
        validate_submission(&[], &Submission::reject("")),
        Err(SubmissionError::UnanswerableBundle)
    );
}

// ---- N3a: normalization ----

#[test]
fn n3a_equivalent_submissions_are_byte_identical() {
    let a = submit(vec![
        entry("q1", &["q1_opt2", "q1_opt1"], " hi "),
        entry("q2", &["q2_opt1"], ""),
    ])
    .unwrap();
    let b = submit(vec![
        entry("q2", &["q2_opt1", "q2_opt1"], ""),
        entry("q1", &["q1_opt1", "q1_opt2", "q1_opt1"], "hi\n"),
    ])
    .unwrap();
    let a = serde_json::to_string(&a.to_response("p", "t")).unwrap();
    let b = serde_json::to_string(&b.to_response("p", "t")).unwrap();
    assert_eq!(a, b);
    assert!(
        a.contains(r#""selected_options":["q1_opt1","q1_opt2"],"custom_text":"hi""#),
        "{a}"
    );
}

#[test]
fn n3a_reason_is_trimmed() {
    let outcome = validate_submission(&questions(), &Submission::reject("  not now \n")).unwrap();
    assert_eq!(outcome.to_response("p", "t").reject_reason, "not now");
}

// ---- R12: key presence on the serialized text ----

/// The object's keys, sorted (serde_json's map does not keep order).
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn r12_rejection_carries_answers_and_every_key() {
    let outcome = validate_submission(&questions(), &Submission::reject("")).unwrap();
    let body = RespondBody::new(
        true,
        outcome.status(),
        outcome.to_response("p-1", "2026-11-30T09:00:00Z"),
    );
    let text = serde_json::to_string(&body).unwrap();
    let raw: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(keys(&raw), ["claimed", "response", "status", "success"]);
    let response = &raw["response"];
    for key in [
        "pending_id",
        "answers",
        "rejected",
        "reject_reason",
        "responded_at",
    ] {
        assert!(
            response.as_object().unwrap().contains_key(key),
            "missing {key} in {text}"
        );
    }
    assert!(text.contains(r#""answers":[]"#), "{text}");
    assert!(text.contains(r#""reject_reason":"""#), "{text}");
    assert!(text.contains(r#""status":"rejected""#), "{text}");
}

#[test]
fn r12_answer_carries_rejected_false_and_every_entry_key() {
    let outcome = submit(vec![entry("q1", &[], ""), entry("q2", &["q2_opt2"], "")]).unwrap();
    let text = serde_json::to_string(&outcome.to_response("p-1", "t")).unwrap();
    assert!(text.contains(r#""rejected":false"#), "{text}");
    assert!(text.contains(r#""reject_reason":"""#), "{text}");
    let raw: Value = serde_json::from_str(&text).unwrap();
    for answer in raw["answers"].as_array().unwrap() {
        assert_eq!(
            keys(answer),
            ["custom_text", "question_id", "selected_options"],
            "{text}"
        );
    }
    assert!(
        text.contains(r#"{"question_id":"q1","selected_options":[],"custom_text":""}"#),
        "{text}"
    );
}

// ---- D2 and R2b: replay from stored rows ----

fn stored(
    id: &str,
    index: i64,
    created_at: i64,
    question: &Question,
    status: &str,
    response: Option<Answer>,
) -> StoredMessage {
    StoredMessage {
        id: id.to_string(),
        created_at,
        metadata: ClarificationMetadata {
            pending_id: "p-1".to_string(),
            question_id: question.question_id.clone(),
            question: question.clone(),
            question_index: index,
            question_total: 2,
            status: clarify_core::BundleStatus::read(Some(status)),
            response,
            ..ClarificationMetadata::default()
        },
    }
}

#[test]
fn r2b_answered_replay_uses_stored_answers_in_d2_order() {
    let qs = questions();
    let outcome = submit(vec![
        entry("q2", &["q2_opt2"], ""),
        entry("q1", &[], "SQLite, please"),
    ])
    .unwrap();
    let answer = |q: &str| outcome.answer_for(q).cloned();
    // Stored out of order; D2 puts q1 (index 0) first.
    let mut rows = vec![
        stored("m-b", 1, 100, &qs[1], "answered", answer("q2")),
        stored("m-a", 0, 200, &qs[0], "answered", answer("q1")),
    ];
    sort_d2(&mut rows);
    let won = winner(&rows).expect("a winner");
    assert_eq!(won.status, Status::Answered);
    let replay = won.to_response("p-1", "t");
    assert_eq!(replay, outcome.to_response("p-1", "t"));
}

#[test]
fn r2b_rejected_replay_has_empty_answers_and_reason() {
    let qs = questions();
    let rows = vec![
        stored("m-a", 0, 1, &qs[0], "rejected", None),
        stored("m-b", 1, 2, &qs[1], "rejected", None),
    ];
    let won = winner(&rows).unwrap();
    let text = serde_json::to_string(&won.to_response("p-1", "t")).unwrap();
    assert!(
        text.contains(r#""answers":[],"rejected":true,"reject_reason":"""#),
        "{text}"
    );
}

#[test]
fn r2b_status_is_the_first_resolution_in_d2_order() {
    let qs = questions();
    let rows = vec![
        stored("m-a", 0, 1, &qs[0], "pending", None),
        stored("m-b", 1, 2, &qs[1], "rejected", None),
    ];
    assert_eq!(winner(&rows).unwrap().status, Status::Rejected);
    let none = vec![
        stored("m-a", 0, 1, &qs[0], "expired", None),
        stored("m-b", 1, 2, &qs[1], "", None),
    ];
    assert_eq!(winner(&none), None);
}

// ---- Messages the agent receives ----

#[test]
fn agent_texts_for_one_question() {
    let one = &questions()[..1];
    let check = |submission: Submission, expected: &str| {
        let outcome = validate_submission(one, &submission).unwrap();
        assert_eq!(agent_text::answer_summary(one, &outcome), expected);
    };
    check(
        Submission::answers(vec![entry("q1", &[], "use sqlite")]),
        "User answered: use sqlite",
    );
    check(
        Submission::answers(vec![entry("q1", &["q1_opt1", "q1_opt3"], "")]),
        "User selected: [SQLite Both]",
    );
    check(
        Submission::answers(vec![entry("q1", &[], "")]),
        "User provided no specific answer.",
    );
    check(Submission::reject(""), "User declined to answer.");
    check(
        Submission::reject("busy"),
        "User declined to answer. Reason: busy",
    );

    let outcome = validate_submission(
        one,
        &Submission::answers(vec![entry("q1", &["q1_opt2"], "")]),
    )
    .unwrap();
    assert_eq!(
        agent_text::resume_prompt(one, &outcome),
        "You previously asked the user: \"Which database?\"\nUser selected: [PostgreSQL]\nPlease continue with this information."
    );
}

#[test]
fn agent_texts_for_several_questions() {
    let outcome = submit(vec![
        entry("q1", &["q1_opt2"], ""),
        entry("q2", &[], "tomorrow"),
    ])
    .unwrap();
    assert_eq!(
        agent_text::resume_prompt(&questions(), &outcome),
        "You previously asked the user:\nQ1: Which database?\nQ2: Ship today?\n\nA1: [PostgreSQL]\nA2: tomorrow\nPlease continue with this information."
    );
}

#[test]
fn agent_texts_for_an_expired_question() {
    assert_eq!(
        agent_text::expired_prompt(&questions()[..1]),
        "You previously asked the user: \"Which database?\"\nNobody answered before the question expired. Decide yourself, or ask again."
    );
    assert_eq!(
        agent_text::expired_prompt(&questions()),
        "You previously asked the user:\nQ1: Which database?\nQ2: Ship today?\nNobody answered before the question expired. Decide yourself, or ask again."
    );
}

// ---- Wire input ----

#[test]
fn submission_refuses_unknown_keys_and_accepts_nulls() {
    assert!(serde_json::from_str::<Submission>(r#"{"answer": []}"#).is_err());
    assert!(
        serde_json::from_str::<Submission>(r#"{"answers": [{"question_id": "q1", "text": "x"}]}"#)
            .is_err()
    );
    let s: Submission =
        serde_json::from_str(r#"{"answers": null, "rejected": true, "reason": null}"#).unwrap();
    assert_eq!(s, Submission::reject(""));
    let s: Submission =
        serde_json::from_str(r#"{"rejected": true, "reason": "mcp spelling"}"#).unwrap();
    assert_eq!(s.reject_reason, "mcp spelling");
}
