//! Structured properties: bundles and answers generated as the wire sends
//! them, valid and near-valid (one rule broken at a time), so that every
//! creation rule and every N-rule of validation is reached, and each
//! refusal names the field that broke it (issue 27, item 6). Each test
//! counts the refusals it saw and fails if a rule was never reached.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::collections::BTreeSet;

use clarify_core::{
    AnswerInput, CreateError, NewBundle, NewOption, NewQuestion, Question, Submission,
    SubmissionError, validate_new_bundle, validate_submission,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const CASES: u32 = 2_000;

/// A valid bundle as an agent writes it: 1–4 questions of 2–6 options,
/// ids given or left out, text padded with whitespace, a context in one of
/// its two forms, sometimes a default.
fn new_bundle() -> impl Strategy<Value = NewBundle> {
    let option =
        ("[a-z]{1,8}", any::<bool>(), "[ ]{0,2}").prop_map(|(label, padded, pad)| NewOption {
            label: if padded {
                format!("{pad}{label}{pad}")
            } else {
                label
            },
            ..NewOption::default()
        });
    let question = (
        "[A-Za-z ?]{0,20}[A-Za-z?]",
        prop::collection::vec(option, 2..=6),
        any::<bool>(),
        any::<bool>(),
        0usize..8,
    )
        .prop_map(|(prompt, options, ids, multi_select, default)| {
            let mut question = NewQuestion {
                prompt,
                options,
                multi_select,
                ..NewQuestion::default()
            };
            if ids {
                for (j, option) in question.options.iter_mut().enumerate() {
                    option.id = format!("o{j}");
                }
            }
            if default < question.options.len() && ids {
                question.default_option_id = format!("o{default}");
            }
            question
        });
    (
        prop::collection::vec(question, 1..=4),
        any::<bool>(),
        0u8..3,
    )
        .prop_map(|(mut questions, ids, context)| {
            if ids {
                for (i, question) in questions.iter_mut().enumerate() {
                    question.id = format!("ask{i}");
                }
            }
            let mut bundle = NewBundle {
                questions,
                ..NewBundle::default()
            };
            match context {
                1 => bundle.context = "  why we ask  ".into(),
                2 => bundle.context_paragraphs = vec!["one".into(), " ".into(), "two".into()],
                _ => {}
            }
            bundle
        })
}

/// The name of a creation rule.
fn create_rule(error: &CreateError) -> &'static str {
    match error {
        CreateError::QuestionCount { .. } => "QuestionCount",
        CreateError::OptionCount { .. } => "OptionCount",
        CreateError::Required { .. } => "Required",
        CreateError::NulCharacter { .. } => "NulCharacter",
        CreateError::TooLong { .. } => "TooLong",
        CreateError::InvalidId { .. } => "InvalidId",
        CreateError::DuplicateId { .. } => "DuplicateId",
        CreateError::TwoContexts => "TwoContexts",
        CreateError::UnknownDefault { .. } => "UnknownDefault",
        _ => panic!("a new creation rule: give this test a way to break it: {error}"),
    }
}

const CREATE_RULES: [&str; 9] = [
    "QuestionCount",
    "OptionCount",
    "Required",
    "NulCharacter",
    "TooLong",
    "InvalidId",
    "DuplicateId",
    "TwoContexts",
    "UnknownDefault",
];

/// Breaks one creation rule of a valid `bundle` (at question `at`): the
/// rule and the field its refusal must name, or `None` when this bundle
/// cannot break it (a duplicate needs two questions).
fn break_bundle(bundle: &mut NewBundle, rule: usize, at: usize) -> Option<(&'static str, String)> {
    let i = at % bundle.questions.len();
    let q = &mut bundle.questions[i];
    let field = format!("questions[{i}]");
    Some(match rule {
        0 => {
            bundle.questions.resize(5, bundle.questions[0].clone());
            for (k, question) in bundle.questions.iter_mut().enumerate() {
                question.id = if question.id.is_empty() {
                    String::new()
                } else {
                    format!("ask{k}")
                };
            }
            ("QuestionCount", "questions".into())
        }
        1 => {
            q.options.truncate(1);
            q.default_option_id.clear();
            ("OptionCount", format!("{field}.options"))
        }
        2 => {
            q.prompt = " \t ".into();
            ("Required", format!("{field}.prompt"))
        }
        3 => {
            q.options[0].label = "a\0b".into();
            ("NulCharacter", format!("{field}.options[0].label"))
        }
        4 => {
            q.title = "t".repeat(201);
            ("TooLong", format!("{field}.title"))
        }
        5 => {
            q.id = "has space".into();
            ("InvalidId", format!("{field}.id"))
        }
        6 => {
            if bundle.questions.len() < 2 {
                return None;
            }
            let last = bundle.questions.len() - 1;
            bundle.questions[0].id = "same".into();
            bundle.questions[last].id = "same".into();
            ("DuplicateId", format!("questions[{last}].id"))
        }
        7 => {
            bundle.context = "one".into();
            bundle.context_paragraphs = vec!["two".into()];
            ("TwoContexts", "context".into())
        }
        _ => {
            q.default_option_id = "nowhere".into();
            ("UnknownDefault", format!("{field}.default_option_id"))
        }
    })
}

#[test]
fn every_creation_rule_is_reached_and_names_its_field() {
    let seen = RefCell::new(BTreeSet::new());
    let mut runner = TestRunner::new(Config::with_cases(CASES));
    let cases = (new_bundle(), 0usize..10, 0usize..4);
    runner
        .run(&cases, |(bundle, rule, at)| {
            // Valid as generated, also after the JSON round trip a client makes.
            let wire: NewBundle =
                serde_json::from_str(&serde_json::to_string(&bundle).unwrap()).unwrap();
            let spec =
                validate_new_bundle(&wire).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(spec.questions.len(), bundle.questions.len());
            for (question, new) in spec.questions.iter().zip(&bundle.questions) {
                prop_assert_eq!(question.options.len(), new.options.len());
                prop_assert_eq!(&question.prompt, new.prompt.trim());
                for option in &question.options {
                    prop_assert_eq!(&option.label, option.label.trim());
                }
            }
            let ids: BTreeSet<&str> = spec
                .questions
                .iter()
                .map(|q| q.question_id.as_str())
                .collect();
            prop_assert_eq!(ids.len(), spec.questions.len(), "question ids are unique");

            let mut broken = bundle;
            let Some((rule, field)) = break_bundle(&mut broken, rule, at) else {
                return Ok(());
            };
            let error = validate_new_bundle(&broken).expect_err("one rule broken");
            Refusal::new(create_rule(&error), &error.field(), &error).is(rule, &field)?;
            seen.borrow_mut().insert(rule);
            Ok(())
        })
        .unwrap();
    all_reached(&CREATE_RULES, &seen.borrow());
}

/// A refusal as the test compares it.
struct Refusal {
    rule: &'static str,
    field: String,
    message: String,
}

impl Refusal {
    /// `error`, found to be `rule`'s, naming `field`.
    fn new(rule: &'static str, field: &impl ToString, error: &impl ToString) -> Self {
        Self {
            rule,
            field: field.to_string(),
            message: error.to_string(),
        }
    }

    /// It is `rule`'s, names `field`, and its message starts with it.
    fn is(&self, rule: &str, field: &str) -> Result<(), TestCaseError> {
        prop_assert_eq!(self.rule, rule, "{}", self.message);
        prop_assert_eq!(self.field.as_str(), field);
        prop_assert!(self.message.starts_with(field), "{}", self.message);
        Ok(())
    }
}

fn all_reached(rules: &[&str], seen: &BTreeSet<&str>) {
    let missed: Vec<_> = rules.iter().filter(|r| !seen.contains(*r)).collect();
    assert!(missed.is_empty(), "never reached: {missed:?}");
}

/// A valid answer to `questions`: an entry per question, in any order,
/// picks of its own options (repeats allowed), padded text.
fn answers_to(
    questions: Vec<Question>,
) -> impl Strategy<Value = (Vec<Question>, Vec<AnswerInput>)> {
    let entries: Vec<_> = questions
        .iter()
        .map(|q| {
            let ids: Vec<String> = q.options.iter().map(|o| o.option_id.clone()).collect();
            let question_id = q.question_id.clone();
            (
                prop::collection::vec(prop::sample::select(ids), 0..4),
                "[ ]{0,2}[a-z本]{0,6}[ ]{0,2}",
            )
                .prop_map(move |(selected_options, custom_text)| AnswerInput {
                    question_id: question_id.clone(),
                    selected_options,
                    custom_text,
                })
        })
        .collect();
    (Just(questions), entries, any::<prop::sample::Index>()).prop_map(|(qs, mut entries, turn)| {
        let turn = turn.index(entries.len());
        entries.rotate_left(turn);
        (qs, entries)
    })
}

fn submission_rule(error: &SubmissionError) -> &'static str {
    match error {
        SubmissionError::UnanswerableBundle => "UnanswerableBundle",
        SubmissionError::AnswerCount { .. } => "AnswerCount",
        SubmissionError::EmptyQuestionId { .. } => "EmptyQuestionId",
        SubmissionError::UnknownQuestion { .. } => "UnknownQuestion",
        SubmissionError::DuplicateQuestion { .. } => "DuplicateQuestion",
        SubmissionError::UnknownOption { .. } => "UnknownOption",
        SubmissionError::RejectedWithAnswers => "RejectedWithAnswers",
        SubmissionError::ReasonWithoutRejection => "ReasonWithoutRejection",
        SubmissionError::NulCharacter { .. } => "NulCharacter",
        SubmissionError::TooLong { .. } => "TooLong",
        _ => panic!("a new N-rule: give this test a way to break it: {error}"),
    }
}

const SUBMISSION_RULES: [&str; 10] = [
    "UnanswerableBundle",
    "AnswerCount",
    "EmptyQuestionId",
    "UnknownQuestion",
    "DuplicateQuestion",
    "UnknownOption",
    "RejectedWithAnswers",
    "ReasonWithoutRejection",
    "NulCharacter",
    "TooLong",
];

/// Breaks one N-rule of a valid submission (at entry `at`): the rule and
/// the field its refusal names, or `None` when it cannot be broken here.
fn break_submission(
    questions: &mut [Question],
    submission: &mut Submission,
    rule: usize,
    at: usize,
) -> Option<(&'static str, String)> {
    let k = at % submission.answers.len();
    let entry = format!("answers[{k}]");
    Some(match rule {
        0 => {
            questions[k % questions.len()].question_id.clear();
            ("UnanswerableBundle", "pending_id".into())
        }
        1 => {
            submission.answers.pop();
            ("AnswerCount", "answers".into())
        }
        2 => {
            submission.answers[k].question_id.clear();
            ("EmptyQuestionId", format!("{entry}.question_id"))
        }
        3 => {
            submission.answers[k].question_id = "q99".into();
            ("UnknownQuestion", format!("{entry}.question_id"))
        }
        4 => {
            if submission.answers.len() < 2 {
                return None;
            }
            let last = submission.answers.len() - 1;
            submission.answers[last].question_id = submission.answers[0].question_id.clone();
            ("DuplicateQuestion", format!("answers[{last}].question_id"))
        }
        5 => {
            let picks = &mut submission.answers[k].selected_options;
            picks.push("q99_opt1".into());
            let at = picks.len() - 1;
            ("UnknownOption", format!("{entry}.selected_options[{at}]"))
        }
        6 => {
            submission.rejected = true;
            ("RejectedWithAnswers", "answers".into())
        }
        7 => {
            submission.reject_reason = "because".into();
            ("ReasonWithoutRejection", "reject_reason".into())
        }
        8 => {
            submission.answers[k].custom_text = "a\0".into();
            ("NulCharacter", format!("{entry}.custom_text"))
        }
        _ => {
            submission.answers[k].custom_text = "é".repeat(2001);
            ("TooLong", format!("{entry}.custom_text"))
        }
    })
}

#[test]
fn every_n_rule_is_reached_and_names_its_field() {
    let seen = RefCell::new(BTreeSet::new());
    let mut runner = TestRunner::new(Config::with_cases(CASES));
    let cases = new_bundle()
        .prop_map(|b| validate_new_bundle(&b).unwrap().questions)
        .prop_flat_map(answers_to);
    let cases = (cases, 0usize..10, 0usize..4);
    runner
        .run(&cases, |((mut questions, answers), rule, at)| {
            let mut submission = Submission::answers(answers);
            let wire: Submission =
                serde_json::from_str(&serde_json::to_string(&submission).unwrap()).unwrap();
            let outcome = validate_submission(&questions, &wire)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            // N3a: one answer per question, in the bundle's order, each
            // pick one of its options, the text trimmed.
            prop_assert_eq!(outcome.answers().len(), questions.len());
            for (answer, question) in outcome.answers().iter().zip(&questions) {
                prop_assert_eq!(&answer.question_id, &question.question_id);
                for pick in &answer.selected_options {
                    prop_assert!(question.options.iter().any(|o| &o.option_id == pick));
                }
                prop_assert_eq!(&answer.custom_text, answer.custom_text.trim());
            }

            let Some((rule, field)) = break_submission(&mut questions, &mut submission, rule, at)
            else {
                return Ok(());
            };
            let error = validate_submission(&questions, &submission).expect_err("one rule broken");
            Refusal::new(submission_rule(&error), &error.field(), &error).is(rule, &field)?;
            seen.borrow_mut().insert(rule);
            Ok(())
        })
        .unwrap();
    all_reached(&SUBMISSION_RULES, &seen.borrow());
}
