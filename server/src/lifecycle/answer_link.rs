//! Answer links (issue 28): a notice of a one-question bundle carries one
//! link per option, each its own capability (a random token, kept only as
//! a hash) to answer that bundle with that option and nothing else. A
//! `GET` shows what it would answer; a `POST` answers through the one
//! claim ([`Resolving::settle`]), as `answered_by.channel` `link` with the
//! target that carried it as `client`.

use clarify_core::api::{Notice, NoticeAction, NoticeKind};
use clarify_core::stored::bundle_questions;
use clarify_core::{
    ANONYMOUS, AnswerInput, AnsweredBy, Channel, Question, Response, Submission,
    validate_submission,
};
use sqlx::AnyConnection;

use super::{Error, Resolving, Result};
use crate::clock::now_micros;
use crate::db::answer_links::{self, AnswerLink};
use crate::db::clarification::{self as repo, Bundle};
use crate::ids::{hash_secret, new_secret_of};

/// The prefix of an answer link's token.
pub const LINK_PREFIX: &str = "clk_link_";

/// An answer link's random bytes: 192 bits, and with the prefix 57
/// characters, so that the token fits a Telegram button's 64 bytes.
const LINK_BYTES: usize = 24;

/// The path answer links live under (`/answer/{token}`).
pub const LINK_PATH: &str = "/answer";

/// Links one bundle may have at most: the stream mints a set per notice it
/// sends, and a follower reconnecting in a loop must not grow the table
/// without end. Past it, notices carry no actions (their `url` stays).
const LINKS_PER_BUNDLE: i64 = 512;

/// What an answer link shows: the question, the option, and where the
/// bundle stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPage {
    /// The task's title.
    pub task: String,
    /// The question's heading; `""` when none.
    pub title: String,
    /// The question.
    pub prompt: String,
    /// The option the link answers.
    pub option: String,
    /// Where the bundle stands.
    pub state: LinkState,
    /// An approval's tool call (issue 47), shown as code; `None` for a
    /// question.
    pub tool_call: Option<clarify_core::ToolCall>,
}

/// Where a link's bundle stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// It waits: confirming answers it.
    Open,
    /// It was resolved; `ours` when by this very request.
    Answered {
        /// Who won.
        by: Option<AnsweredBy>,
        /// The winner's answer, as a person reads it.
        answer: String,
        /// This request's POST won.
        ours: bool,
    },
    /// It expired or was cancelled unanswered.
    Closed,
}

/// The one question a link can answer, if `bundle` is a bundle of one
/// question that is not multi-select and has options.
pub(super) fn linkable(bundle: &Bundle) -> Option<Question> {
    let mut questions = bundle_questions(&bundle.messages);
    let question = questions.pop()?;
    (questions.is_empty() && !question.multi_select && !question.options.is_empty())
        .then_some(question)
}

/// Whether a `change` notice of `bundle` carries answer links.
pub(super) fn wants_links(bundle: &Bundle, change: NoticeKind) -> bool {
    matches!(change, NoticeKind::Waiting | NoticeKind::Reminder) && linkable(bundle).is_some()
}

/// Whether `pending_id` may still be given links.
pub(super) async fn room_for_links(
    db: impl sqlx::AnyExecutor<'_>,
    pending_id: &str,
) -> Result<bool> {
    Ok(answer_links::count_of(db, pending_id).await? < LINKS_PER_BUNDLE)
}

/// New links for `question`'s options, carried by `client`: the actions a
/// notice shows, and the rows to store (token hashes, never the tokens).
fn new_links(
    pending_id: &str,
    question: &Question,
    base: &str,
    client: &str,
) -> (Vec<NoticeAction>, Vec<(String, AnswerLink)>) {
    question
        .options
        .iter()
        .map(|option| {
            let token = new_secret_of(LINK_PREFIX, LINK_BYTES);
            let action = NoticeAction {
                label: option.label.clone(),
                option_id: option.option_id.clone(),
                url: format!("{base}{LINK_PATH}/{token}"),
            };
            let link = AnswerLink {
                pending_id: pending_id.to_owned(),
                option_id: option.option_id.clone(),
                client: clarify_core::client_name(client),
            };
            (action, (hash_secret(&token), link))
        })
        .unzip()
}

impl Resolving {
    /// Gives `notice` (of `bundle`) its answer links, carried by `client`,
    /// stored on `conn`: only a waiting or reminder notice of a linkable
    /// bundle gets any.
    ///
    /// # Errors
    /// Database errors.
    pub(super) async fn add_links(
        conn: &mut AnyConnection,
        bundle: &Bundle,
        notice: &mut Notice,
        base: &str,
        client: &str,
    ) -> Result<()> {
        let Some(question) = linkable(bundle)
            .filter(|_| matches!(notice.event, NoticeKind::Waiting | NoticeKind::Reminder))
        else {
            return Ok(());
        };
        let pending_id = bundle.pending_id();
        if !room_for_links(&mut *conn, pending_id).await? {
            return Ok(());
        }
        let (actions, rows) = new_links(pending_id, &question, base, client);
        let now = now_micros();
        for (hash, link) in &rows {
            answer_links::insert(&mut *conn, hash, link, now).await?;
        }
        notice.actions = actions;
        Ok(())
    }

    /// What the link `token` would answer, and where its bundle stands.
    ///
    /// # Errors
    /// 404 for a token that is no link (or whose bundle is gone).
    pub async fn link_page(&self, token: &str) -> Result<LinkPage> {
        let (link, bundle, question) = self.link(token).await?;
        let state = self.standing(&bundle, &question).await?;
        page(&bundle, &question, &link, state, &self.shared.db).await
    }

    /// Answers the link `token`'s bundle with its option through the one
    /// claim; a later press is told the winner's answer.
    ///
    /// # Errors
    /// 404 for a token that is no link; the claim's errors.
    pub async fn answer_by_link(&self, token: &str) -> Result<LinkPage> {
        self.answer_through(token, None).await
    }

    /// Answers as [`Resolving::answer_by_link`] does; a press in a chat
    /// app names its `user` and `channel`, and only a link that chat was
    /// sent counts.
    pub(super) async fn answer_through(
        &self,
        token: &str,
        presser: Option<(&str, Channel)>,
    ) -> Result<LinkPage> {
        let (link, bundle, question) = self.link(token).await?;
        let by = match presser {
            None => AnsweredBy::new(ANONYMOUS, Channel::Link, &link.client),
            Some((user, channel)) if link.client == channel.as_str() => {
                AnsweredBy::new(user, channel, "")
            }
            Some(_) => return Err(Error::NotFound("answer link")),
        };
        let submission = Submission {
            answers: vec![AnswerInput {
                question_id: question.question_id.clone(),
                selected_options: vec![link.option_id.clone()],
                custom_text: String::new(),
            }],
            ..Submission::default()
        };
        let questions = [question.clone()];
        let outcome = validate_submission(&questions, &submission)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let state = match self.settle(&bundle, &questions, &outcome, &by).await {
            Ok(body) => LinkState::Answered {
                answer: answer_text(&question, &body.response),
                by: Some(if body.claimed {
                    by
                } else {
                    self.reread_winner(bundle.pending_id()).await?
                }),
                ours: body.claimed,
            },
            Err(Error::Conflict(_)) => LinkState::Closed,
            Err(other) => return Err(other),
        };
        page(&bundle, &question, &link, state, &self.shared.db).await
    }

    async fn link(&self, token: &str) -> Result<(AnswerLink, Bundle, Question)> {
        const UNKNOWN: Error = Error::NotFound("answer link");
        if !token.starts_with(LINK_PREFIX) || token.len() > 128 {
            return Err(UNKNOWN);
        }
        let link = answer_links::by_hash(self.shared.db.pool(), &hash_secret(token))
            .await?
            .ok_or(UNKNOWN)?;
        let bundle = repo::load(self.shared.db.pool(), &link.pending_id)
            .await?
            .ok_or(UNKNOWN)?;
        let question = linkable(&bundle).ok_or(UNKNOWN)?;
        Ok((link, bundle, question))
    }

    async fn standing(&self, bundle: &Bundle, question: &Question) -> Result<LinkState> {
        if let Some(winner) = bundle.winner() {
            let response = winner.to_response(bundle.pending_id(), "");
            return Ok(LinkState::Answered {
                by: bundle.answered_by(),
                answer: answer_text(question, &response),
                ours: false,
            });
        }
        if repo::is_active(self.shared.db.pool(), bundle.pending_id()).await? {
            Ok(LinkState::Open)
        } else {
            Ok(LinkState::Closed)
        }
    }

    async fn reread_winner(&self, pending_id: &str) -> Result<AnsweredBy> {
        let bundle = repo::load(self.shared.db.pool(), pending_id).await?;
        Ok(bundle.and_then(|b| b.answered_by()).unwrap_or_default())
    }
}

async fn page(
    bundle: &Bundle,
    question: &Question,
    link: &AnswerLink,
    state: LinkState,
    db: &crate::db::Db,
) -> Result<LinkPage> {
    let task = crate::db::tasks::get(db.pool(), bundle.task_id())
        .await?
        .map(|t| t.title)
        .unwrap_or_default();
    Ok(LinkPage {
        task,
        title: question.title.clone(),
        prompt: question.prompt.clone(),
        option: question
            .option_label(&link.option_id)
            .unwrap_or(&link.option_id)
            .to_owned(),
        state,
        tool_call: clarify_core::approval::bundle_tool_call(&bundle.messages).cloned(),
    })
}

/// The winner's answer to `question` as a person reads it: the chosen
/// options' labels and any text, or that it was declined.
#[must_use]
pub fn answer_text(question: &Question, response: &Response) -> String {
    if response.rejected {
        return "declined".to_owned();
    }
    let Some(answer) = response.answers.first() else {
        return String::new();
    };
    let mut parts: Vec<String> = answer
        .selected_options
        .iter()
        .map(|id| question.option_label(id).unwrap_or(id).to_owned())
        .collect();
    if !answer.custom_text.is_empty() {
        parts.push(format!("“{}”", answer.custom_text));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clarify_core::QuestionOption;

    fn question() -> Question {
        Question {
            question_id: "q1".into(),
            title: String::new(),
            prompt: "Which database?".into(),
            options: vec![
                QuestionOption {
                    option_id: "pg".into(),
                    label: "Postgres".into(),
                    ..QuestionOption::default()
                },
                QuestionOption {
                    option_id: "lite".into(),
                    label: "SQLite".into(),
                    ..QuestionOption::default()
                },
            ],
            multi_select: false,
            default_option_id: String::new(),
        }
    }

    #[test]
    fn each_option_gets_its_own_unguessable_link_stored_only_as_a_hash() {
        let (actions, rows) = new_links("p1", &question(), "http://h:1", "ntfy.sh");
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[0].label, "Postgres");
        assert_eq!(rows[1].1.option_id, "lite");
        for ((action, (hash, link)), option) in actions.iter().zip(&rows).zip(["pg", "lite"]) {
            let token = action.url.strip_prefix("http://h:1/answer/").expect("path");
            // 24 random bytes, hex: 192 bits, above the 128 asked for, and
            // short enough for a Telegram button.
            assert_eq!(token.len(), LINK_PREFIX.len() + 48, "{token}");
            assert!(token.len() <= 64);
            assert_eq!(hash, &hash_secret(token));
            assert!(!hash.contains(token) && !action.url.contains(hash.as_str()));
            assert_eq!(
                (link.pending_id.as_str(), link.option_id.as_str()),
                ("p1", option)
            );
            assert_eq!(link.client, "ntfy.sh");
        }
        assert_ne!(actions[0].url, actions[1].url);
    }

    #[test]
    fn the_winners_answer_reads_as_labels_and_text() {
        let response = Response {
            pending_id: "p1".into(),
            answers: vec![clarify_core::Answer {
                question_id: "q1".into(),
                selected_options: vec!["pg".into()],
                custom_text: "with pgvector".into(),
            }],
            rejected: false,
            reject_reason: String::new(),
            responded_at: String::new(),
        };
        assert_eq!(
            answer_text(&question(), &response),
            "Postgres, “with pgvector”"
        );
    }
}
