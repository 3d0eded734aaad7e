//! The answering side from a shell: `clarify pending` lists what waits,
//! `clarify answer` answers or declines it (recorded as the `cli` channel).

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use clarify_core::{AnswerInput, PendingPage, RespondBody, Submission};

use super::reach::Reach;
use crate::client::{Client, expect};

/// `clarify pending`.
#[derive(Debug, Args)]
pub struct PendingArgs {
    #[command(flatten)]
    pub answerer: Reach,
}

/// `clarify answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    #[command(flatten)]
    pub answerer: Reach,
    /// The bundle to answer.
    pub pending_id: String,
    /// An option to choose, by id (`q1_opt2`: its question is the part
    /// before `_opt`); repeatable.
    #[arg(long = "option", short = 'o', value_name = "OPTION_ID")]
    pub options: Vec<String>,
    /// Your own words for a question, as QUESTION_ID=TEXT; repeatable.
    #[arg(long = "text", short = 't', value_name = "QUESTION_ID=TEXT")]
    pub texts: Vec<String>,
    /// Decline to answer the whole bundle.
    #[arg(long, conflicts_with_all = ["options", "texts"])]
    pub reject: bool,
    /// Why, with --reject.
    #[arg(long, requires = "reject", default_value = "")]
    pub reason: String,
}

/// Runs `clarify pending`: the page of bundles waiting, as JSON.
pub async fn pending(args: PendingArgs) -> ExitCode {
    let client = Client::new(&args.answerer.server, args.answerer.token);
    let listed = async { expect::<PendingPage>(client.get("/pending?limit=200").await?, &[200]) };
    match listed.await {
        Ok(page) => print_json(&page, ExitCode::SUCCESS),
        Err(message) => fail("pending", &message),
    }
}

/// Runs `clarify answer`: exit 0 when this answer won, 2 when someone
/// else's had (their answer is printed), 1 on an error (a 409 included).
pub async fn answer(args: AnswerArgs) -> ExitCode {
    let submission = match submission(&args) {
        Ok(submission) => submission,
        Err(message) => return fail("answer", &message),
    };
    let client = Client::new(&args.answerer.server, args.answerer.token);
    let path = format!("/clarification/{}/respond", args.pending_id);
    let sent = async { expect::<RespondBody>(client.post(&path, &submission).await?, &[200]) };
    match sent.await {
        Ok(body) => {
            let code = if body.claimed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
            print_json(&body, code)
        }
        Err(message) => fail("answer", &message),
    }
}

/// The submission the flags make: one answer per question named.
fn submission(args: &AnswerArgs) -> Result<Submission, String> {
    if args.reject {
        return Ok(Submission::reject(&args.reason));
    }
    if args.options.is_empty() && args.texts.is_empty() {
        return Err("give --option OPTION_ID, --text QUESTION_ID=TEXT, or --reject".into());
    }
    let mut answers: Vec<AnswerInput> = Vec::new();
    for option in &args.options {
        let question = option
            .split_once("_opt")
            .map(|(q, _)| q)
            .filter(|q| !q.is_empty())
            .ok_or_else(|| format!("--option {option}: not an option id such as q1_opt2"))?;
        entry(&mut answers, question)
            .selected_options
            .push(option.clone());
    }
    for text in &args.texts {
        let (question, words) = text
            .split_once('=')
            .ok_or_else(|| format!("--text {text}: expected QUESTION_ID=TEXT"))?;
        entry(&mut answers, question.trim()).custom_text = words.to_owned();
    }
    Ok(Submission::answers(answers))
}

/// The answer to `question_id` being built, added when first named.
fn entry<'a>(answers: &'a mut Vec<AnswerInput>, question_id: &str) -> &'a mut AnswerInput {
    let at = match answers.iter().position(|a| a.question_id == question_id) {
        Some(at) => at,
        None => {
            answers.push(AnswerInput {
                question_id: question_id.to_owned(),
                ..AnswerInput::default()
            });
            answers.len() - 1
        }
    };
    &mut answers[at]
}

fn print_json(value: &impl serde::Serialize, code: ExitCode) -> ExitCode {
    let text = serde_json::to_string(value).unwrap_or_default();
    if writeln!(std::io::stdout(), "{text}").is_err() {
        return ExitCode::FAILURE;
    }
    code
}

fn fail(command: &str, message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "clarify {command}: {message}");
    ExitCode::FAILURE
}
