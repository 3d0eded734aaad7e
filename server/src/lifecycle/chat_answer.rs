//! Answers from chat apps (issue 28): a button press in Slack or Telegram
//! answers through the option's answer link as the chat's user; a reply
//! to the bot's Telegram message answers a one-question bundle with its
//! text. Either way the one claim decides, and the person is told a line:
//! what they answered, or the winner's answer.

use clarify_core::stored::bundle_questions;
use clarify_core::{AnswerInput, AnsweredBy, Channel, Submission, validate_submission};

use super::answer_link::{LinkState, answer_text};
use super::{Error, Resolving, Result};
use crate::db::chat_messages;
use crate::db::clarification as repo;

/// What a person is told of their press or reply.
fn told(state: &LinkState) -> String {
    match state {
        LinkState::Open => "Still waiting.".to_owned(),
        LinkState::Answered {
            answer, ours: true, ..
        } => format!("Answered: {answer}"),
        LinkState::Answered {
            by,
            answer,
            ours: false,
        } => match by {
            Some(by) => format!("Already answered by {}: {answer}", who(by)),
            None => format!("Already answered: {answer}"),
        },
        LinkState::Closed => "This question is no longer waiting for an answer.".to_owned(),
    }
}

/// "alice in the browser".
fn who(by: &AnsweredBy) -> String {
    format!("{} {}", by.user, Channel::phrase(&by.channel))
        .trim_end()
        .to_owned()
}

impl Resolving {
    /// A press of the button whose data is `token`, by `user` in `channel`:
    /// whether it won, and the line to tell them.
    ///
    /// # Errors
    /// 404 for a token that is no link this chat was sent; the claim's.
    pub async fn press_in_chat(
        &self,
        token: &str,
        user: &str,
        channel: Channel,
    ) -> Result<(bool, String)> {
        let page = self.answer_through(token, Some((user, channel))).await?;
        let won = matches!(page.state, LinkState::Answered { ours: true, .. });
        Ok((won, told(&page.state)))
    }

    /// A reply by `user` to the message `message_ref` in `target`: the
    /// text answers that message's bundle, if it has one question; the
    /// line to tell them, or `None` when the message is not a question's.
    ///
    /// # Errors
    /// 400 for text the question cannot take; the claim's.
    pub async fn reply_in_chat(
        &self,
        target: &str,
        message_ref: &str,
        user: &str,
        text: &str,
    ) -> Result<Option<String>> {
        let pool = self.shared.db.pool();
        let Some(pending_id) = chat_messages::pending_of(pool, target, message_ref).await? else {
            return Ok(None);
        };
        let Some(bundle) = repo::load(pool, &pending_id).await? else {
            return Ok(None);
        };
        let questions = bundle_questions(&bundle.messages);
        let [question] = questions.as_slice() else {
            return Ok(Some(
                "This question has several parts: answer it in Clarify.".to_owned(),
            ));
        };
        let submission = Submission {
            answers: vec![AnswerInput {
                question_id: question.question_id.clone(),
                selected_options: Vec::new(),
                custom_text: text.to_owned(),
            }],
            ..Submission::default()
        };
        let outcome = validate_submission(&questions, &submission)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let by = AnsweredBy::new(user, Channel::Telegram, "");
        let state = match self.settle(&bundle, &questions, &outcome, &by).await {
            Ok(body) => {
                let answer = answer_text(question, &body.response);
                let winner = if body.claimed {
                    Some(by)
                } else {
                    repo::load(pool, &pending_id)
                        .await?
                        .and_then(|b| b.answered_by())
                };
                LinkState::Answered {
                    by: winner,
                    answer,
                    ours: body.claimed,
                }
            }
            Err(Error::Conflict(_)) => LinkState::Closed,
            Err(other) => return Err(other),
        };
        Ok(Some(told(&state)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_told_their_answer_or_the_winners() {
        let by = AnsweredBy::new("bob", Channel::Browser, "");
        let lost = LinkState::Answered {
            by: Some(by),
            answer: "Postgres".into(),
            ours: false,
        };
        assert_eq!(
            told(&lost),
            "Already answered by bob in the browser: Postgres"
        );
        let won = LinkState::Answered {
            by: None,
            answer: "SQLite".into(),
            ours: true,
        };
        assert_eq!(told(&won), "Answered: SQLite");
    }
}
