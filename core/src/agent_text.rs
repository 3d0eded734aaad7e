//! The texts an agent receives: the answer summary and the resume prompt
//! (DESIGN.md "Messages the agent receives").

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::envelope::Answer;
use crate::question::Question;
use crate::validate::Outcome;

/// One line (or, for a single question, one sentence) per question telling
/// the agent what the user decided.
#[must_use]
pub fn answer_summary(questions: &[Question], outcome: &Outcome) -> String {
    match outcome {
        Outcome::Rejected { reason } if reason.is_empty() => {
            String::from("User declined to answer.")
        }
        Outcome::Rejected { reason } => format!("User declined to answer. Reason: {reason}"),
        Outcome::Answered(answers) if questions.len() == 1 => {
            single_answer(&questions[0], answers.first())
        }
        Outcome::Answered(answers) => questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let answer = answers.iter().find(|a| a.question_id == q.question_id);
                format!("A{}: {}", i + 1, compact_answer(q, answer))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// The prompt that resumes a detached agent with the answer to what it asked.
#[must_use]
pub fn resume_prompt(questions: &[Question], outcome: &Outcome) -> String {
    let summary = answer_summary(questions, outcome);
    let mut prompt = String::new();
    if let [only] = questions {
        let _ = writeln!(prompt, "You previously asked the user: \"{}\"", only.prompt);
        let _ = writeln!(prompt, "{summary}");
    } else {
        prompt.push_str("You previously asked the user:\n");
        for (i, q) in questions.iter().enumerate() {
            let _ = writeln!(prompt, "Q{}: {}", i + 1, q.prompt);
        }
        let _ = write!(prompt, "\n{summary}\n");
    }
    prompt.push_str("Please continue with this information.");
    prompt
}

/// The prompt that resumes a detached agent whose question expired
/// unanswered (issue 18): nobody chose for it, so it decides or asks again.
#[must_use]
pub fn expired_prompt(questions: &[Question]) -> String {
    let mut prompt = String::new();
    if let [only] = questions {
        let _ = writeln!(prompt, "You previously asked the user: \"{}\"", only.prompt);
    } else {
        prompt.push_str("You previously asked the user:\n");
        for (i, q) in questions.iter().enumerate() {
            let _ = writeln!(prompt, "Q{}: {}", i + 1, q.prompt);
        }
    }
    prompt.push_str(EXPIRED);
    prompt
}

/// What an agent is told when its question expired unanswered.
pub const EXPIRED: &str =
    "Nobody answered before the question expired. Decide yourself, or ask again.";

fn single_answer(question: &Question, answer: Option<&Answer>) -> String {
    let (options, text) = parts(question, answer);
    match (options, text) {
        (None, None) => String::from("User provided no specific answer."),
        (Some(options), None) => format!("User selected: {options}"),
        (None, Some(text)) => format!("User answered: {text}"),
        (Some(options), Some(text)) => format!("User selected: {options}\nUser answered: {text}"),
    }
}

fn compact_answer(question: &Question, answer: Option<&Answer>) -> String {
    match parts(question, answer) {
        (None, None) => String::from("(no answer)"),
        (Some(options), None) => options,
        (None, Some(text)) => String::from(text),
        (Some(options), Some(text)) => format!("{options} {text}"),
    }
}

/// The chosen options as `[label label]` and the free text, each if present.
fn parts<'a>(question: &Question, answer: Option<&'a Answer>) -> (Option<String>, Option<&'a str>) {
    let Some(answer) = answer else {
        return (None, None);
    };
    let options = (!answer.selected_options.is_empty()).then(|| {
        let labels: Vec<&str> = answer
            .selected_options
            .iter()
            .map(|id| question.option_label(id).unwrap_or(id))
            .collect();
        format!("[{}]", labels.join(" "))
    });
    let text = (!answer.custom_text.is_empty()).then_some(answer.custom_text.as_str());
    (options, text)
}
