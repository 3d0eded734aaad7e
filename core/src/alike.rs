//! Bundles that ask the same thing (issue 29 item 5): ten agents of one
//! migration each asking "Postgres or SQLite?" are one decision for a
//! person. Alike means the same questions with the same options, ids and
//! all, so one submission fits each; the context (which agent, which
//! shard) may differ.
//!
//! [`similar_key`] names the class in lists, so a program can group as the
//! inbox does; [`alike`] compares the questions themselves, so grouping
//! never rests on the key alone.

use alloc::string::String;
use alloc::vec::Vec;
use sha2::{Digest, Sha256};

use crate::approval::ToolCall;
use crate::listing::ListedQuestion;
use crate::question::{Question, QuestionOption};

/// A question as asked, listed or stored: what [`alike`] compares.
pub trait Asks {
    /// Its id, title, prompt, whether several options go together, and
    /// its options.
    fn asks(&self) -> (&str, &str, &str, bool, &[QuestionOption]);
}

impl Asks for ListedQuestion {
    fn asks(&self) -> (&str, &str, &str, bool, &[QuestionOption]) {
        (
            &self.question_id,
            &self.title,
            &self.prompt,
            self.multi_select,
            &self.options,
        )
    }
}

impl Asks for Question {
    fn asks(&self) -> (&str, &str, &str, bool, &[QuestionOption]) {
        (
            &self.question_id,
            &self.title,
            &self.prompt,
            self.multi_select,
            &self.options,
        )
    }
}

/// What makes two bundles' questions the same, as one byte string: each
/// text length-prefixed, so no two different bundles encode alike.
fn canonical<Q: Asks>(questions: &[Q]) -> Vec<u8> {
    fn text(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = Vec::new();
    for q in questions {
        let (id, title, prompt, multi, options) = q.asks();
        text(&mut out, id);
        text(&mut out, title);
        text(&mut out, prompt);
        out.push(u8::from(multi));
        out.extend_from_slice(&(options.len() as u64).to_le_bytes());
        for o in options {
            text(&mut out, &o.option_id);
            text(&mut out, &o.label);
            text(&mut out, &o.description);
        }
    }
    out
}

/// A stable name for what `questions` ask: 32 hex digits of their SHA-256.
/// Equal for bundles that are [`alike`]; a collision would take a broken
/// SHA-256, and even then [`alike`] decides.
#[must_use]
pub fn similar_key<Q: Asks>(questions: &[Q]) -> String {
    hex_key(&canonical(questions))
}

/// [`similar_key`] of a bundle that may be an approval (issue 47): the
/// call is part of what it asks, so approvals of two different calls never
/// share a key, and a question's key is unchanged.
#[must_use]
pub fn similar_key_of<Q: Asks>(questions: &[Q], call: Option<&ToolCall>) -> String {
    let mut bytes = canonical(questions);
    if let Some(call) = call {
        for text in [call.tool.as_str(), call.call.as_str()] {
            bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
        }
    }
    hex_key(&bytes)
}

fn hex_key(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    digest[..16]
        .iter()
        .flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]])
        .map(char::from)
        .collect()
}

/// Whether two bundles' questions are the same, so one answer fits both.
#[must_use]
pub fn alike<Q: Asks>(a: &[Q], b: &[Q]) -> bool {
    !a.is_empty() && canonical(a) == canonical(b)
}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use super::{alike, similar_key, similar_key_of};
    use crate::approval::ToolCall;
    use crate::listing::ListedQuestion;
    use crate::question::QuestionOption;

    fn question(prompt: &str, labels: &[&str]) -> ListedQuestion {
        ListedQuestion {
            question_id: "q1".into(),
            prompt: prompt.into(),
            status: "pending".into(),
            options: labels
                .iter()
                .enumerate()
                .map(|(i, l)| QuestionOption {
                    option_id: alloc::format!("q1_opt{}", i + 1),
                    label: (*l).into(),
                    description: alloc::string::String::new(),
                })
                .collect(),
            ..ListedQuestion::default()
        }
    }

    #[test]
    fn the_same_questions_share_a_key_and_any_difference_splits_them() {
        let a = vec![question("Which database?", &["Postgres", "SQLite"])];
        let mut answered = a.clone();
        answered[0].status = "answered".into();
        answered[0].default_option_id = "q1_opt1".into();
        assert_eq!(similar_key(&a), similar_key(&answered));
        assert!(alike(&a, &answered));
        assert_eq!(similar_key(&a).len(), 32);
        for other in [
            vec![question("Which database?", &["Postgres", "MySQL"])],
            vec![question("Which database? ", &["Postgres", "SQLite"])],
            vec![question("Which database?", &["SQLite", "Postgres"])],
            vec![question("Which database?", &["Postgres"])],
            vec![question("Which database?", &["Postgres", "SQLite"]); 2],
        ] {
            assert_ne!(similar_key(&a), similar_key(&other), "{other:?}");
            assert!(!alike(&a, &other));
        }
        // Length prefixes: moving text between fields changes the key.
        let split = vec![question("ab", &["c"])];
        let moved = vec![question("a", &["bc"])];
        assert_ne!(similar_key(&split), similar_key(&moved));
        assert!(!alike::<ListedQuestion>(&[], &[]));
    }

    /// issue 47: a question's key is unchanged; approvals of two calls
    /// never share one.
    #[test]
    fn an_approvals_call_is_part_of_its_key() {
        let a = vec![question("Allow Bash?", &["Allow once", "Deny"])];
        let call = |c: &str| ToolCall {
            tool: "Bash".into(),
            call: c.into(),
        };
        assert_eq!(similar_key_of(&a, None), similar_key(&a));
        let test = similar_key_of(&a, Some(&call("npm test")));
        assert_ne!(test, similar_key(&a));
        assert_eq!(test, similar_key_of(&a, Some(&call("npm test"))));
        assert_ne!(test, similar_key_of(&a, Some(&call("npm publish"))));
    }
}
