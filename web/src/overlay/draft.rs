//! What the human has entered for one bundle, kept per `pending_id` so a
//! re-render, a live update or a second bundle never mixes answers up.

use clarify_core::{AnswerInput, Question, Submission, exceeds_text_limit};
use serde::{Deserialize, Serialize};

/// The answers, step and drafts of one bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    /// The question card shown.
    pub step: usize,
    /// Chosen option ids per question.
    pub selected: Vec<Vec<String>>,
    /// Free text per question.
    pub text: Vec<String>,
    /// Escape folded the overlay away; nothing was sent. Not kept across
    /// reloads: a reloaded page shows the question again.
    #[serde(skip)]
    pub collapsed: bool,
    /// Its submit is in flight: what settles it now is this page's own
    /// answer, not someone else's (`overtaken`).
    #[serde(skip)]
    pub sending: bool,
}

impl Draft {
    /// An empty draft for `count` questions.
    pub fn new(count: usize) -> Self {
        Self {
            step: 0,
            selected: vec![Vec::new(); count],
            text: vec![String::new(); count],
            collapsed: false,
            sending: false,
        }
    }

    /// Whether question `i` has an option or some text.
    pub fn is_answered(&self, i: usize) -> bool {
        self.selected.get(i).is_some_and(|s| !s.is_empty())
            || self.text.get(i).is_some_and(|t| !t.trim().is_empty())
    }

    /// How many questions are answered.
    pub fn answered(&self) -> usize {
        (0..self.text.len())
            .filter(|&i| self.is_answered(i))
            .count()
    }

    /// Whether any text is over the N8b limit (W4a).
    pub fn over_limit(&self) -> bool {
        self.text.iter().any(|t| exceeds_text_limit(t))
    }

    /// The questions (0-based) whose text is over the limit.
    pub fn over_questions(&self) -> Vec<usize> {
        (0..self.text.len())
            .filter(|&i| exceeds_text_limit(&self.text[i]))
            .collect()
    }

    /// Picks option `option_id` of question `i`, or unpicks it. Typed
    /// text stays: an option and words go together (N8), and a click must
    /// never throw away what a person wrote (issue 29). On a
    /// `multi`-select question a pick adds to the others, where it
    /// replaces them on any other.
    pub fn toggle(&mut self, i: usize, option_id: &str, multi: bool) {
        let Some(selected) = self.selected.get_mut(i) else {
            return;
        };
        if let Some(at) = selected.iter().position(|s| s == option_id) {
            if multi {
                selected.remove(at);
            } else {
                selected.clear();
            }
        } else {
            if !multi {
                selected.clear();
            }
            selected.push(option_id.to_owned());
        }
    }

    /// Where a click (or number key) on an option of question `i` of
    /// `count` leads once [`Draft::toggle`] has recorded it: one click
    /// answers a single question; in a bundle it moves on to the next
    /// unanswered card, and only the last answer waits for Submit. A
    /// multi-select question, an option clicked off, or a question with
    /// words typed stays: the pick joins the words, and Submit sends both.
    pub fn after_pick(&self, i: usize, count: usize, multi: bool) -> AfterPick {
        let typed = self.text.get(i).is_some_and(|t| !t.trim().is_empty());
        if multi || typed || self.selected.get(i).is_none_or(Vec::is_empty) {
            return AfterPick::Stay;
        }
        if count == 1 {
            return AfterPick::Submit;
        }
        (i + 1..count)
            .chain(0..i)
            .find(|&j| !self.is_answered(j))
            .map_or(AfterPick::Stay, AfterPick::Card)
    }

    /// Sets the text of question `i`; its options stay picked (N8: both
    /// are sent).
    pub fn type_text(&mut self, i: usize, text: String) {
        if let Some(slot) = self.text.get_mut(i) {
            *slot = text;
        }
    }

    /// The submission these answers make.
    pub fn submission(&self, questions: &[Question]) -> Submission {
        Submission::answers(
            questions
                .iter()
                .enumerate()
                .map(|(i, q)| AnswerInput {
                    question_id: q.question_id.clone(),
                    selected_options: self.selected.get(i).cloned().unwrap_or_default(),
                    custom_text: self.text.get(i).cloned().unwrap_or_default(),
                })
                .collect(),
        )
    }
}

/// What follows a pick, by [`Draft::after_pick`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPick {
    /// Nothing: the human goes on choosing (or presses Submit).
    Stay,
    /// Show this card (0-based), the next one still unanswered.
    Card(usize),
    /// Send the bundle now.
    Submit,
}

/// The tab's session storage: a reload or an accidental navigation keeps
/// what was typed, and closing the tab forgets it.
fn storage() -> Option<web_sys::Storage> {
    leptos::prelude::window().session_storage().ok().flatten()
}

fn storage_key(pending_id: &str) -> String {
    format!("clarify.draft.{pending_id}")
}

/// The draft saved for `pending_id`, if it fits a bundle of `count` questions.
pub fn load(pending_id: &str, count: usize) -> Option<Draft> {
    let text = storage()?.get_item(&storage_key(pending_id)).ok()??;
    crate::json::parse::<Draft>(&text)
        .ok()
        .filter(|d| d.text.len() == count && d.selected.len() == count)
}

/// Saves the draft of `pending_id`.
pub fn save(pending_id: &str, draft: &Draft) {
    if let (Some(storage), Ok(text)) = (storage(), crate::json::stringify(draft)) {
        let _ = storage.set_item(&storage_key(pending_id), &text);
    }
}

/// Forgets the draft of a settled bundle.
pub fn forget(pending_id: &str) {
    if let Some(storage) = storage() {
        let _ = storage.remove_item(&storage_key(pending_id));
    }
}

#[cfg(test)]
mod tests {
    use super::{AfterPick, Draft};

    fn picked(count: usize, picks: &[(usize, &str)], multi: bool) -> (Draft, AfterPick) {
        let mut draft = Draft::new(count);
        let mut after = AfterPick::Stay;
        for (i, option) in picks {
            draft.toggle(*i, option, multi);
            after = draft.after_pick(*i, count, multi);
        }
        (draft, after)
    }

    #[test]
    fn one_click_answers_a_single_question() {
        assert_eq!(picked(1, &[(0, "a")], false).1, AfterPick::Submit);
    }

    #[test]
    fn a_bundle_advances_to_the_next_unanswered_card_and_waits_on_the_last() {
        assert_eq!(picked(3, &[(0, "a")], false).1, AfterPick::Card(1));
        assert_eq!(
            picked(3, &[(0, "a"), (1, "b")], false).1,
            AfterPick::Card(2)
        );
        // Answered out of order: back to the one left.
        assert_eq!(
            picked(3, &[(2, "c"), (0, "a")], false).1,
            AfterPick::Card(1)
        );
        // Everything answered: Submit is the human's to press.
        assert_eq!(
            picked(3, &[(0, "a"), (1, "b"), (2, "c")], false).1,
            AfterPick::Stay
        );
    }

    #[test]
    fn multi_select_and_unpicking_never_move_on() {
        assert_eq!(picked(1, &[(0, "a")], true).1, AfterPick::Stay);
        assert_eq!(picked(1, &[(0, "a"), (0, "a")], false).1, AfterPick::Stay);
    }

    #[test]
    fn a_pick_never_throws_away_typed_words_and_waits_for_submit() {
        // Issue 29: "only in eu because of GDPR", then a click on an option.
        let mut draft = Draft::new(1);
        draft.type_text(0, "only in eu because of GDPR".into());
        draft.toggle(0, "a", false);
        assert_eq!(draft.text[0], "only in eu because of GDPR");
        assert_eq!(draft.selected[0], ["a"]);
        assert_eq!(draft.after_pick(0, 1, false), AfterPick::Stay);
        // And words typed after a pick keep it.
        let mut draft = Draft::new(1);
        draft.toggle(0, "a", false);
        draft.type_text(0, "because".into());
        assert_eq!(draft.selected[0], ["a"]);
        // Whitespace is no words: one click still answers.
        let mut draft = Draft::new(1);
        draft.type_text(0, "  ".into());
        draft.toggle(0, "a", false);
        assert_eq!(draft.after_pick(0, 1, false), AfterPick::Submit);
    }

    #[test]
    fn typed_text_counts_as_answered_when_looking_for_the_next_card() {
        let mut draft = Draft::new(3);
        draft.type_text(1, "my own words".into());
        draft.toggle(0, "a", false);
        assert_eq!(draft.after_pick(0, 3, false), AfterPick::Card(2));
    }
}
