//! Questions that expire on purpose (issue 18): an ask may say when
//! (`expires_in_seconds`), the server may set a default (`--question-ttl`);
//! a sweep on every replica expires what is due, guarded like a claim, so
//! exactly one replica expires a bundle and an answer racing the expiry has
//! exactly one outcome. The sweep itself is [`super::expiry_sweep`].

use std::time::Duration;

use clarify_core::stored::bundle_questions;
use clarify_core::{AnswerInput, Channel, RespondBody, Response, Status, Submission, agent_text};

use super::provenance::Via;
use super::{Asking, Result, Sweeps};
use crate::auth::Caller;
use crate::clock::{self, now_micros};
use crate::db::clarification::{self as repo, Bundle, Scope, Transition};
use crate::db::sessions;
use crate::resume::{ResumePayload, ResumeTarget};

/// How often each replica looks for questions that are due.
pub const EXPIRY_EVERY: Duration = Duration::from_secs(1);

/// The longest `expires_in_seconds` taken: a year.
pub const LONGEST: u64 = 365 * 24 * 3600;

/// An ask's `expires_in_seconds`, checked.
///
/// # Errors
/// 400 naming the field: 0, or more than a year.
pub fn expires_in(seconds: Option<u64>) -> Result<Option<Duration>> {
    match seconds {
        None => Ok(None),
        Some(0) => Err(super::Error::Invalid(
            "expires_in_seconds: must be at least 1".into(),
        )),
        Some(s) if s > LONGEST => Err(super::Error::Invalid(format!(
            "expires_in_seconds: at most {LONGEST} (a year)"
        ))),
        Some(s) => Ok(Some(Duration::from_secs(s))),
    }
}

impl Asking {
    /// When a bundle asked `now` expires: its own `expires_in`, else the
    /// server's default, else never (0).
    pub(super) fn expires_at(&self, now: i64, expires_in: Option<Duration>) -> i64 {
        expires_in
            .or(self.question_ttl)
            .map_or(0, |after| now.saturating_add(clock::micros(after)))
    }
}

impl Sweeps {
    /// Expires one due bundle, or answers it with its defaults; `give_up`
    /// skips the defaults (their delivery kept being refused) and expires
    /// it plainly. [`Expiry::Refused`] when the defaults' delivery was
    /// refused: the bundle is open again, to be tried later.
    ///
    /// # Errors
    /// Database errors.
    pub(super) async fn expire_one(&self, pending_id: &str, give_up: bool) -> Result<Expiry> {
        if !give_up {
            match self.choose_defaults(pending_id).await? {
                Defaults::None => {}
                Defaults::Chosen => return Ok(Expiry::Done),
                Defaults::Refused => return Ok(Expiry::Refused),
            }
        }
        // The same guard as a claim: only active rows change, so an
        // answer that won first leaves nothing here, and the reverse.
        let now = now_micros();
        let changed = repo::transition(
            &self.shared.db,
            Scope::Bundle(pending_id),
            Transition::Expire,
            now,
        )
        .await?;
        if changed.is_empty() {
            return Ok(Expiry::Done);
        }
        let Some(bundle) = repo::load(self.shared.db.pool(), pending_id).await? else {
            return Ok(Expiry::Done);
        };
        let kind = crate::measure::Measure::kind_of(&bundle.messages);
        self.shared.measure.settled("expired", "expiry", kind, None);
        // `closed` wakes the waiters and tells the browsers.
        self.shared
            .closed(&changed, bundle.session_id(), bundle.task_id())
            .await?;
        self.resume_expired(&bundle, pending_id).await;
        Ok(Expiry::Done)
    }

    /// When every question of the bundle names a default, the bundle is
    /// answered with them, through the one claim (so a person's answer
    /// racing it has exactly one outcome), as the `expiry` channel so the
    /// agent can tell a default from a person's choice.
    async fn choose_defaults(&self, pending_id: &str) -> Result<Defaults> {
        let Some(bundle) = repo::load(self.shared.db.pool(), pending_id).await? else {
            return Ok(Defaults::None);
        };
        let questions = bundle_questions(&bundle.messages);
        if questions.iter().any(|q| q.default_option_id.is_empty()) {
            return Ok(Defaults::None);
        }
        let answers = questions
            .iter()
            .map(|q| AnswerInput {
                question_id: q.question_id.clone(),
                selected_options: vec![q.default_option_id.clone()],
                custom_text: String::new(),
            })
            .collect();
        let via = Via::channel(Channel::Expiry);
        let submission = Submission::answers(answers);
        match self
            .resolving
            .resolve(&Caller::Unscoped, &via, &pending_id.into(), &submission)
            .await
        {
            // Either the defaults won, or a person's answer had: done.
            Ok(_) | Err(super::Error::Conflict(_)) => Ok(Defaults::Chosen),
            // The resume target refused them: open again (R7a), and the
            // sweep tries again later rather than lose the defaults.
            Err(super::Error::Undelivered) => Ok(Defaults::Refused),
            Err(error) => Err(error),
        }
    }

    /// A detached agent with a resume target is resumed with the news that
    /// nobody answered (only the replica whose transition expired the
    /// bundle gets here, so once). A failed dispatch is logged: the
    /// question stays expired either way.
    async fn resume_expired(&self, bundle: &Bundle, pending_id: &str) {
        if !bundle.detached() {
            return;
        }
        let target = match sessions::get(self.shared.db.pool(), bundle.session_id()).await {
            Ok(session) => {
                session.and_then(|s| serde_json::from_str::<ResumeTarget>(&s.resume_target).ok())
            }
            Err(error) => {
                tracing::warn!(pending_id, %error, "expired, but its agent was not resumed");
                return;
            }
        };
        let Some(target) = target else { return };
        let prompt = agent_text::expired_prompt(&bundle_questions(&bundle.messages));
        let body = expired_body(bundle, pending_id);
        let payload = ResumePayload {
            session_id: bundle.session_id(),
            task_id: bundle.task_id(),
            pending_id,
            prompt: &prompt,
            response: &body.response,
        };
        let accepted = self.resolving.resumer.dispatch(&target, &payload).await;
        self.shared.measure.resumed(&target, accepted);
        if !accepted {
            tracing::warn!(pending_id, "expired, and its agent's resume target refused");
        }
    }
}

/// How one due bundle went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expiry {
    /// Expired, answered with its defaults, or already closed: nothing left.
    Done,
    /// Its defaults' delivery was refused; it is open again.
    Refused,
}

/// What the defaults of a bundle came to.
enum Defaults {
    /// Some question names none: the bundle expires plainly.
    None,
    /// They answered it, or a person had.
    Chosen,
    /// Their delivery was refused.
    Refused,
}

/// When `bundle` expires, as listed: RFC 3339, or `""` for never.
pub(super) fn expires_at_text(bundle: &Bundle) -> String {
    bundle.expires_at().map(clock::rfc3339).unwrap_or_default()
}

/// Whether `bundle` expired on purpose (its time came), as opposed to being
/// closed with its session: then a waiting agent is told so, typed.
pub(super) fn timed_out(bundle: &Bundle) -> bool {
    bundle.messages.iter().any(|m| {
        m.metadata.status.known() == Some(Status::Expired)
            && m.metadata.expires_at > 0
            && bundle.updated_at() >= m.metadata.expires_at
    })
}

/// What a wait on an expired bundle answers: `status: "expired"`, no
/// answers, in the respond body's shape (every key present, R12).
pub(super) fn expired_body(bundle: &Bundle, pending_id: &str) -> RespondBody {
    let response = Response {
        pending_id: pending_id.to_owned(),
        answers: Vec::new(),
        rejected: false,
        reject_reason: String::new(),
        responded_at: clock::rfc3339(bundle.updated_at()),
    };
    RespondBody::new(false, Status::Expired, response)
}
