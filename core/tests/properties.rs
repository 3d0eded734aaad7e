//! Property tests: normalization is canonical (N3a) and validation never
//! panics, whatever the input.
#![cfg(not(target_arch = "wasm32"))]

use clarify_core::{
    AnswerInput, NewBundle, NewOption, NewQuestion, Question, Submission, validate_new_bundle,
    validate_submission,
};
use proptest::prelude::*;

/// A bundle of 1–4 questions with 2–6 options each.
fn bundle() -> impl Strategy<Value = Vec<Question>> {
    prop::collection::vec(2usize..=6, 1..=4).prop_map(|option_counts| {
        let questions = option_counts
            .iter()
            .enumerate()
            .map(|(i, &n)| NewQuestion {
                prompt: format!("question {i}"),
                options: (0..n)
                    .map(|j| NewOption {
                        label: format!("option {j}"),
                        ..NewOption::default()
                    })
                    .collect(),
                ..NewQuestion::default()
            })
            .collect();
        validate_new_bundle(&NewBundle {
            questions,
            ..NewBundle::default()
        })
        .unwrap()
        .questions
    })
}

/// A valid answer for `questions`, as option picks (with repeats) and text.
fn answers_for(questions: &[Question]) -> impl Strategy<Value = Vec<AnswerInput>> + use<> {
    let per_question: Vec<_> = questions
        .iter()
        .map(|q| {
            let ids: Vec<String> = q.options.iter().map(|o| o.option_id.clone()).collect();
            let qid = q.question_id.clone();
            (
                prop::collection::vec(prop::sample::select(ids), 0..8),
                "[ \t\n]{0,2}[a-z本😀]{0,5}[ \t\n]{0,2}",
            )
                .prop_map(move |(selected_options, custom_text)| AnswerInput {
                    question_id: qid.clone(),
                    selected_options,
                    custom_text,
                })
        })
        .collect();
    per_question
}

fn serialized(questions: &[Question], answers: Vec<AnswerInput>) -> String {
    let outcome = validate_submission(questions, &Submission::answers(answers)).unwrap();
    serde_json::to_string(&outcome.to_response("p", "t")).unwrap()
}

proptest! {
    #[test]
    fn normalization_ignores_entry_order_and_option_duplication(
        (questions, answers, seed) in bundle().prop_flat_map(|qs| {
            let answers = answers_for(&qs);
            (Just(qs), answers, any::<u64>())
        })
    ) {
        let canonical = serialized(&questions, answers.clone());

        let mut shuffled = answers;
        // A deterministic permutation of entries and of each entry's options.
        let turns = usize::try_from(seed % 4).unwrap() % shuffled.len();
        shuffled.rotate_left(turns);
        for entry in &mut shuffled {
            entry.selected_options.reverse();
            let copies = entry.selected_options.clone();
            entry.selected_options.extend(copies);
        }
        prop_assert_eq!(&serialized(&questions, shuffled), &canonical);
    }

    #[test]
    fn normalization_is_idempotent(
        (questions, answers) in bundle().prop_flat_map(|qs| {
            let answers = answers_for(&qs);
            (Just(qs), answers)
        })
    ) {
        let once = validate_submission(&questions, &Submission::answers(answers)).unwrap();
        let again: Vec<AnswerInput> = once
            .answers()
            .iter()
            .map(|a| AnswerInput {
                question_id: a.question_id.clone(),
                selected_options: a.selected_options.clone(),
                custom_text: a.custom_text.clone(),
            })
            .collect();
        let twice = validate_submission(&questions, &Submission::answers(again)).unwrap();
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn validation_never_panics_on_arbitrary_submissions(
        questions in bundle(),
        answers in prop::collection::vec(
            ("q[0-9]?|", prop::collection::vec("q[0-9]_opt[0-9]|x", 0..4), "\\PC{0,8}")
                .prop_map(|(question_id, selected_options, custom_text)| AnswerInput {
                    question_id, selected_options, custom_text,
                }),
            0..6,
        ),
        rejected in any::<bool>(),
        reject_reason in "\\PC{0,4}",
    ) {
        let submission = Submission { answers, rejected, reject_reason };
        let _ = validate_submission(&questions, &submission);
    }

    #[test]
    fn parsing_and_creation_never_panic_on_arbitrary_json(text in "\\PC{0,64}") {
        if let Ok(bundle) = serde_json::from_str::<NewBundle>(&text) {
            let _ = validate_new_bundle(&bundle);
        }
        let _ = serde_json::from_str::<Submission>(&text);
    }
}
