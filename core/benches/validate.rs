//! Validate + normalize a 4-question bundle, the work every answer does
//! before its claim. The baseline in the same run is plain JSON parsing of the
//! same submission, so the figure reads as "rules cost N× a parse".

use clarify_core::{NewBundle, Submission, validate_new_bundle, validate_submission};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

const BUNDLE: &str = r#"{"questions": [
  {"prompt": "Which database?", "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}, {"label": "Both"}]},
  {"prompt": "Which port?", "options": [{"label": "80"}, {"label": "443"}, {"label": "8080"}, {"label": "7420"}]},
  {"prompt": "Ship today?", "options": [{"label": "Yes"}, {"label": "No"}]},
  {"prompt": "Who reviews?", "options": [{"label": "Ana"}, {"label": "Ben"}, {"label": "Caro"}, {"label": "Dev"}, {"label": "Eli"}, {"label": "Fay"}]}
]}"#;

const SUBMISSION: &str = r#"{"answers": [
  {"question_id": "q4", "selected_options": ["q4_opt6", "q4_opt1", "q4_opt1"], "custom_text": "  both of them  "},
  {"question_id": "q2", "selected_options": ["q2_opt4"]},
  {"question_id": "q1", "selected_options": ["q1_opt2"], "custom_text": "we need replicas; 本当に"},
  {"question_id": "q3", "custom_text": "tomorrow morning, after the release notes are reviewed"}
]}"#;

fn bench(c: &mut Criterion) {
    let bundle: NewBundle = serde_json::from_str(BUNDLE).unwrap();
    let questions = validate_new_bundle(&bundle).unwrap().questions;
    let submission: Submission = serde_json::from_str(SUBMISSION).unwrap();

    let mut group = c.benchmark_group("four_question_bundle");
    group.bench_function("baseline: parse submission JSON", |b| {
        b.iter(|| serde_json::from_str::<Submission>(black_box(SUBMISSION)).unwrap());
    });
    group.bench_function("validate + normalize", |b| {
        b.iter(|| validate_submission(black_box(&questions), black_box(&submission)).unwrap());
    });
    group.bench_function("validate + normalize + serialize envelope", |b| {
        b.iter(|| {
            let outcome =
                validate_submission(black_box(&questions), black_box(&submission)).unwrap();
            serde_json::to_string(&outcome.to_response("p-1", "2026-11-30T09:00:00Z")).unwrap()
        });
    });
    group.bench_function("create: validate new bundle", |b| {
        b.iter(|| validate_new_bundle(black_box(&bundle)).unwrap());
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
