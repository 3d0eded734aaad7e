//! One row of the audit export (issue 49 item 5): a bundle's view and its
//! attempts log made into what an auditor reads, as JSON lines; CSV
//! writes the same rows (`audit_csv.rs`).

use clarify_core::api::BundleView;
use clarify_core::provenance::{AnsweredBy, Attempt};
use serde::Serialize;

/// One question of a bundle and what was answered to it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AuditQuestion {
    /// Its id.
    pub question_id: String,
    /// What was asked.
    pub prompt: String,
    /// The chosen options' labels and the text typed, `""` when unanswered.
    pub answer: String,
}

/// One bundle, as the export writes it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AuditRow {
    /// The bundle.
    pub pending_id: String,
    /// The task it blocked.
    pub task_id: String,
    /// The session whose agent asked.
    pub session_id: String,
    /// `question` or `approval`.
    pub kind: String,
    /// When it was asked (RFC 3339).
    pub asked_at: String,
    /// How it stands: `pending`, `answered`, `rejected`, `cancelled`, `expired`…
    pub status: String,
    /// Who it was for, `""` for anyone who may see it.
    pub assignee: String,
    /// Its questions and their answers.
    pub questions: Vec<AuditQuestion>,
    /// Who won, and how; `null` while nobody has.
    pub answered_by: Option<AnsweredBy>,
    /// When the winner answered (RFC 3339), `""` while nobody has.
    pub answered_at: String,
    /// Why it was declined, `""` otherwise.
    pub reject_reason: String,
    /// Every attempt to answer, the winner's first, each with its outcome.
    pub attempts: Vec<Attempt>,
    /// Later attempts beyond those kept, counted.
    pub more_attempts: u64,
}

pub fn row(view: BundleView, attempts: Vec<Attempt>, more: u64) -> AuditRow {
    let response = view.response.as_ref();
    let questions = view
        .bundle
        .questions
        .iter()
        .map(|q| {
            let answer = response
                .and_then(|r| r.answers.iter().find(|a| a.question_id == q.question_id))
                .map(|a| {
                    let mut parts: Vec<String> = a
                        .selected_options
                        .iter()
                        .map(|id| {
                            q.options
                                .iter()
                                .find(|o| &o.option_id == id)
                                .map_or_else(|| id.clone(), |o| o.label.clone())
                        })
                        .collect();
                    if !a.custom_text.is_empty() {
                        parts.push(a.custom_text.clone());
                    }
                    parts.join(", ")
                })
                .unwrap_or_default();
            AuditQuestion {
                question_id: q.question_id.clone(),
                prompt: q.prompt.clone(),
                answer,
            }
        })
        .collect();
    AuditRow {
        pending_id: view.bundle.pending_id,
        task_id: view.bundle.task_id,
        session_id: view.bundle.session_id,
        kind: serde_json::to_value(view.bundle.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        asked_at: view.bundle.created_at,
        status: view.status.as_str().to_owned(),
        assignee: view.bundle.assignee,
        questions,
        answered_at: attempts
            .iter()
            .find(|a| a.outcome == "won")
            .map(|a| a.at.clone())
            .unwrap_or_default(),
        reject_reason: response
            .filter(|r| r.rejected)
            .map(|r| r.reject_reason.clone())
            .unwrap_or_default(),
        answered_by: view.answered_by,
        attempts,
        more_attempts: more,
    }
}

pub fn jsonl(rows: &[AuditRow]) -> String {
    rows.iter()
        .filter_map(|row| serde_json::to_string(row).ok())
        .map(|line| line + "\n")
        .collect()
}
