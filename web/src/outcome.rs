//! How a submit ended, and why a question could no longer be answered, in
//! the words a person is told (R10 as W2/W3 read it; issue 29).

use clarify_core::{Response, Status, api};

/// What a submit ended in (R10 as W2/W3 read it).
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitOutcome {
    /// 200 and ours won; the server's normalized record of it.
    Claimed(Status, Response),
    /// 200 `claimed: false`: someone else won; their answer is the truth.
    Lost(Status, Response),
    /// 409: no longer active and nobody to report as the winner; why.
    Inactive(Closed),
    /// One answer for several alike bundles (issue 29 item 5): how many
    /// took it, how many had been answered elsewhere first, and how many
    /// had closed unanswered.
    Alike {
        claimed: usize,
        lost: usize,
        closed: usize,
    },
}

impl SubmitOutcome {
    /// What the inbox says once a submit is over.
    pub fn sentence(&self) -> String {
        match self {
            // A decline is said as one (issue 46 item 6).
            Self::Claimed(Status::Rejected, _) => "Declined and sent.".to_owned(),
            Self::Claimed(..) => "Answer sent.".to_owned(),
            Self::Lost(..) => "Someone else answered first.".to_owned(),
            Self::Inactive(why) => why.sentence(),
            Self::Alike {
                claimed,
                lost,
                closed,
            } => {
                let all = claimed + lost + closed;
                let mut text = if *claimed == all {
                    format!("Answer sent to all {all} alike questions.")
                } else {
                    format!("Answer sent to {claimed} of {all} alike questions.")
                };
                if *lost > 0 {
                    text.push_str(&format!(" {lost} had been answered elsewhere first."));
                }
                if *closed > 0 {
                    text.push_str(&format!(" {closed} had closed unanswered."));
                }
                text
            }
        }
    }
}

/// Why a question could no longer be answered, as its view says.
#[derive(Debug, Clone, PartialEq)]
pub enum Closed {
    /// Its time ran out, `ago` seconds ago.
    Expired { ago: i64 },
    /// Its agent's session ended before anyone answered.
    SessionEnded,
    /// The agent withdrew it.
    Withdrawn,
    /// Anything else (a newer turn, or the view could not be read).
    Other,
}

impl Closed {
    /// What a person is told (issue 29: not just "no longer active").
    pub fn sentence(&self) -> String {
        match self {
            Self::Expired { ago } if *ago < 60 => "This question expired just now.".into(),
            Self::Expired { ago } => format!(
                "This question expired {} ago.",
                crate::waiting::age_text(*ago)
            ),
            Self::SessionEnded => "The agent's session ended before this was answered.".into(),
            Self::Withdrawn => "The agent withdrew this question.".into(),
            Self::Other => "This question is no longer active.".into(),
        }
    }

    /// Read from the bundle's view, `now` in milliseconds since the epoch.
    pub fn of(view: &api::BundleView, now: f64) -> Self {
        use clarify_core::ViewStatus;
        match &view.status {
            ViewStatus::Known(Status::Cancelled) => Self::Withdrawn,
            ViewStatus::Known(Status::Expired) => {
                let at = js_sys::Date::parse(&view.bundle.expires_at);
                if view.bundle.expires_at.is_empty() || at.is_nan() || at > now {
                    Self::SessionEnded
                } else {
                    // Whole seconds of a span of milliseconds: exact enough.
                    #[allow(clippy::cast_possible_truncation)]
                    let ago = ((now - at) / 1000.0) as i64;
                    Self::Expired { ago }
                }
            }
            _ => Self::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Closed, SubmitOutcome};

    #[test]
    fn one_answer_for_alike_questions_says_how_it_went() {
        let said = |claimed, lost, closed| {
            SubmitOutcome::Alike {
                claimed,
                lost,
                closed,
            }
            .sentence()
        };
        assert_eq!(said(4, 0, 0), "Answer sent to all 4 alike questions.");
        assert_eq!(
            said(2, 1, 1),
            "Answer sent to 2 of 4 alike questions. 1 had been answered elsewhere first. 1 had \
             closed unanswered."
        );
    }

    #[test]
    fn a_closed_question_says_why() {
        assert_eq!(
            Closed::Expired { ago: 5 }.sentence(),
            "This question expired just now."
        );
        assert_eq!(
            Closed::Expired { ago: 180 }.sentence(),
            "This question expired 3 min ago."
        );
        assert_eq!(
            Closed::Withdrawn.sentence(),
            "The agent withdrew this question."
        );
        assert_eq!(
            Closed::Other.sentence(),
            "This question is no longer active."
        );
    }
}
