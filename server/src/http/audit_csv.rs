//! The audit export as CSV (issue 49 item 5): one row a bundle, its
//! questions and attempts folded into cells, for a spreadsheet.

use super::audit_row::AuditRow;

/// The header row's columns.
const COLUMNS: [&str; 14] = [
    "pending_id",
    "task_id",
    "session_id",
    "kind",
    "asked_at",
    "status",
    "assignee",
    "questions",
    "answers",
    "answered_by",
    "channel",
    "client",
    "answered_at",
    "attempts",
];

/// `rows` as CSV with a header row (RFC 4180 quoting, by the `csv` crate).
pub fn write(rows: &[AuditRow]) -> String {
    let mut out = csv::Writer::from_writer(Vec::new());
    let _ = out.write_record(COLUMNS);
    for row in rows {
        let by = row.answered_by.as_ref();
        let attempts: Vec<String> = row
            .attempts
            .iter()
            .map(|a| {
                format!(
                    "{} {} via {} at {}",
                    a.outcome, a.by.user, a.by.channel, a.at
                )
            })
            .collect();
        let _ = out.write_record([
            row.pending_id.as_str(),
            &row.task_id,
            &row.session_id,
            &row.kind,
            &row.asked_at,
            &row.status,
            &row.assignee,
            &row.questions
                .iter()
                .map(|q| q.prompt.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            &row.questions
                .iter()
                .map(|q| q.answer.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            by.map_or("", |b| b.user.as_str()),
            by.map_or("", |b| b.channel.as_str()),
            by.map_or("", |b| b.client.as_str()),
            &row.answered_at,
            &attempts.join("; "),
        ]);
    }
    String::from_utf8(out.into_inner().unwrap_or_default()).unwrap_or_default()
}
