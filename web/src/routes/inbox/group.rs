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

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use clarify_core::{ListedQuestion, PendingBundle};

    use super::group;

    fn bundle(id: &str, key: &str, prompt: &str) -> PendingBundle {
        PendingBundle {
            pending_id: id.into(),
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
}
