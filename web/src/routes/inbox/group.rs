//! Alike bundles folded into one row (issue 29 item 5).

use std::collections::HashSet;

use clarify_core::PendingBundle;
use clarify_core::alike::alike;

/// The rows: each bundle, oldest first, with the later ones that ask the
/// same folded into it (issue 29 item 5): same `similar_key` and questions
/// compared alike, unless the person split that key apart.
pub(super) fn group(
    list: &[PendingBundle],
    apart: &HashSet<String>,
) -> Vec<(PendingBundle, Vec<String>)> {
    let mut rows: Vec<(PendingBundle, Vec<String>)> = Vec::new();
    for bundle in list {
        let key = &bundle.similar_key;
        let leader = (!key.is_empty() && !apart.contains(key))
            .then(|| {
                rows.iter_mut().find(|(lead, _)| {
                    &lead.similar_key == key && alike(&lead.questions, &bundle.questions)
                })
            })
            .flatten();
        match leader {
            Some((_, others)) => others.push(bundle.pending_id.clone()),
            None => rows.push((bundle.clone(), Vec::new())),
        }
    }
    rows
}

/// A row: a bundle and the alike ones answered with it.
pub(super) type Row = (PendingBundle, Vec<String>);

/// Rows gathered under their task, tasks in the order their oldest row
/// comes (issue 46 item 8: one task no longer appears four times).
pub(super) fn by_task(rows: Vec<Row>) -> Vec<(String, Vec<Row>)> {
    let mut tasks: Vec<(String, Vec<Row>)> = Vec::new();
    for row in rows {
        match tasks.iter_mut().find(|(task, _)| *task == row.0.task_id) {
            Some((_, rows)) => rows.push(row),
            None => tasks.push((row.0.task_id.clone(), vec![row])),
        }
    }
    tasks
}

/// Whether `bundle` (of the task titled `task`) is kept by the filter
/// `words` (ASCII lower case: Unicode's case tables would cost the wasm
/// 4 KB): each word is in the task's title or a question.
pub(super) fn matches(bundle: &PendingBundle, task: &str, words: &str) -> bool {
    let mut text = task.to_ascii_lowercase();
    for q in &bundle.questions {
        text.push(' ');
        text.push_str(&q.title.to_ascii_lowercase());
        text.push(' ');
        text.push_str(&q.prompt.to_ascii_lowercase());
    }
    words.split_whitespace().all(|w| text.contains(w))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use clarify_core::{ListedQuestion, PendingBundle};

    use super::{by_task, group, matches};

    fn bundle(id: &str, key: &str, prompt: &str) -> PendingBundle {
        PendingBundle {
            pending_id: id.into(),
            task_id: format!("task-{key}"),
            similar_key: key.into(),
            questions: vec![ListedQuestion {
                question_id: "q1".into(),
                prompt: prompt.into(),
                ..ListedQuestion::default()
            }],
            ..PendingBundle::default()
        }
    }

    fn rows(list: &[PendingBundle], apart: &HashSet<String>) -> Vec<(String, Vec<String>)> {
        group(list, apart)
            .into_iter()
            .map(|(b, others)| (b.pending_id, others))
            .collect()
    }

    #[test]
    fn alike_bundles_fold_into_the_oldest_unless_split_or_only_the_key_matches() {
        let list = [
            bundle("a", "k", "Postgres or SQLite?"),
            bundle("b", "x", "Something else?"),
            bundle("c", "k", "Postgres or SQLite?"),
            // A forged key on other questions is not folded in.
            bundle("d", "k", "Send me your secrets?"),
            bundle("e", "", "Postgres or SQLite?"),
        ];
        assert_eq!(
            rows(&list, &HashSet::new()),
            [
                ("a".to_owned(), vec!["c".to_owned()]),
                ("b".to_owned(), vec![]),
                ("d".to_owned(), vec![]),
                ("e".to_owned(), vec![]),
            ]
        );
        let apart = HashSet::from(["k".to_owned()]);
        assert_eq!(rows(&list, &apart).len(), 5);
    }

    #[test]
    fn rows_gather_under_their_task_and_the_filter_keeps_every_word() {
        let list = [
            bundle("a", "k", "Postgres or SQLite?"),
            bundle("b", "x", "Something else?"),
            bundle("c", "k", "Retry policy?"),
        ];
        let rows = group(&list, &HashSet::from(["k".to_owned()]));
        let tasks: Vec<(String, usize)> = by_task(rows)
            .into_iter()
            .map(|(t, rows)| (t, rows.len()))
            .collect();
        assert_eq!(tasks, [("task-k".to_owned(), 2), ("task-x".to_owned(), 1)]);
        assert!(matches(&list[0], "Billing", "billing postgres"));
        assert!(!matches(&list[0], "Billing", "billing retry"));
        assert!(matches(&list[0], "", ""));
    }
}
