//! What `answer_with_me_kandev` tells the person's client: how each bundle
//! it showed ended, in words for the model and as structured content.

use clarify_core::api::BundleView;
use clarify_core::{PendingBundle, RespondBody, Response};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::{Deserialize, Serialize};

/// How one bundle ended in this call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Your answer won the claim.
    Answered,
    /// Someone else's answer won first; `response` is theirs.
    AnsweredElsewhere,
    /// It closed (expired, cancelled) before an answer.
    Closed,
    /// You dismissed its form: it still waits.
    Skipped,
    /// Your answer could not be taken (`note` says why): it still waits.
    NotSent,
    /// Your client shows no forms: it waits for you elsewhere.
    Waiting,
}

/// One bundle's line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Line {
    /// The bundle.
    pub pending_id: String,
    /// Its task's title.
    pub task: String,
    /// How it ended.
    pub outcome: Outcome,
    /// The winning response, when it was answered (by you or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Response>,
    /// Why it was not sent, or what it asks while it waits.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Line {
    /// A line without a response.
    #[must_use]
    pub fn new(bundle: &PendingBundle, task: &str, outcome: Outcome, note: String) -> Self {
        Self {
            pending_id: bundle.pending_id.clone(),
            task: task.to_owned(),
            outcome,
            response: None,
            note,
        }
    }

    /// The line for a bundle that could not be read again (`why`).
    #[must_use]
    pub fn unread(pending_id: String, why: String) -> Self {
        Self {
            pending_id,
            task: String::new(),
            outcome: Outcome::Closed,
            response: None,
            note: why,
        }
    }

    /// The line for a claim's result: won, or lost to `body.response`.
    #[must_use]
    pub fn claimed(bundle: &PendingBundle, task: &str, body: RespondBody) -> Self {
        let outcome = if body.claimed {
            Outcome::Answered
        } else {
            Outcome::AnsweredElsewhere
        };
        Self {
            response: Some(body.response),
            ..Self::new(bundle, task, outcome, String::new())
        }
    }

    /// The line for a bundle found settled before its form was sent back.
    #[must_use]
    pub fn settled(view: BundleView, task: &str) -> Self {
        let outcome = if view.response.is_some() {
            Outcome::AnsweredElsewhere
        } else {
            Outcome::Closed
        };
        Self {
            response: view.response,
            ..Self::new(&view.bundle, task, outcome, String::new())
        }
    }

    fn words(&self) -> String {
        let what = match (&self.outcome, &self.response) {
            (Outcome::Answered, Some(r)) if r.rejected => "you declined it".to_owned(),
            (Outcome::Answered, _) => "your answer was sent to the agent".to_owned(),
            (Outcome::AnsweredElsewhere, Some(r)) if r.rejected => {
                "someone else declined it first".to_owned()
            }
            (Outcome::AnsweredElsewhere, _) => format!(
                "someone else answered first ({})",
                serde_json::to_string(&self.response.as_ref().map(|r| &r.answers))
                    .unwrap_or_default()
            ),
            (Outcome::Closed, _) => "it closed before an answer".to_owned(),
            (Outcome::Skipped, _) => "skipped; it still waits".to_owned(),
            (Outcome::NotSent, _) => format!("not sent ({}); it still waits", self.note),
            (Outcome::Waiting, _) => format!("waits: {}", self.note),
        };
        format!("- \"{}\" ({}): {what}", self.task, self.pending_id)
    }
}

/// Everything the call did.
#[derive(Debug, Serialize)]
pub struct Report {
    /// One line per bundle shown, in the order shown.
    pub results: Vec<Line>,
    /// Whether more bundles wait than one call shows.
    pub more_waiting: bool,
}

impl Report {
    /// The tool's result: the lines in words, and as structured content.
    #[must_use]
    pub fn into_result(self, heading: &str) -> CallToolResult {
        let mut text = heading.to_owned();
        for line in &self.results {
            text.push('\n');
            text.push_str(&line.words());
        }
        if self.more_waiting {
            text.push_str("\nMore questions wait: call the tool again to answer them.");
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = serde_json::to_value(&self).ok();
        result
    }
}
