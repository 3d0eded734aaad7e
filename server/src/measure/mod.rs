//! What an operator scrapes (issue 49 item 1): counters and histograms the
//! server keeps as it works, and gauges read when scraped, in Prometheus's
//! text exposition format.
//!
//! Each server holds its own recorder (not the process's global one):
//! several servers in one process, as the tests run them, never mix their
//! figures, and nothing is recorded where nobody scrapes. Names follow
//! Prometheus's conventions (`_total`, `_seconds`).

mod probe;

use std::sync::Arc;
use std::time::Duration;

use metrics::{Key, Label, Metadata, Recorder as _};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusRecorder};

/// The buckets every `_seconds` histogram uses: from a millisecond (a wake,
/// a claim) to a day (a question answered the next morning).
const SECONDS: [f64; 16] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0, 120.0, 900.0, 3_600.0,
    86_400.0,
];

static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), metrics::Level::INFO, Some(module_path!()));

pub use probe::Read;

/// One server's figures; cheap to clone.
#[derive(Clone)]
pub struct Measure(Arc<PrometheusRecorder>, probe::Probes);

impl std::fmt::Debug for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Measure")
    }
}

impl Default for Measure {
    fn default() -> Self {
        let recorder = PrometheusBuilder::new().set_buckets(&SECONDS).map_or_else(
            |_| PrometheusBuilder::new().build_recorder(),
            PrometheusBuilder::build_recorder,
        );
        for (name, help) in HELP {
            recorder.describe_counter((*name).into(), None, (*help).into());
        }
        Self(Arc::new(recorder), probe::Probes::default())
    }
}

/// What each figure means, as `# HELP` says it.
const HELP: &[(&str, &str)] = &[
    (
        "clarify_questions_asked_total",
        "Bundles asked, by kind (question, approval).",
    ),
    (
        "clarify_questions_settled_total",
        "Bundles settled, by outcome (answered, declined, expired, cancelled), channel and kind.",
    ),
    (
        "clarify_time_to_answer_seconds",
        "From asked to settled, for bundles a person answered or declined.",
    ),
    (
        "clarify_claim_seconds",
        "How long the claim that settles a bundle took.",
    ),
    (
        "clarify_questions_waiting",
        "Bundles waiting for an answer now.",
    ),
    (
        "clarify_agents_waiting",
        "Agents blocked on an answer on this replica now.",
    ),
    (
        "clarify_notices_total",
        "Notice sends, by channel and outcome (sent, refused, failed).",
    ),
    (
        "clarify_resume_dispatches_total",
        "Resumes dispatched to agents, by target (webhook, command) and outcome (accepted, refused).",
    ),
    (
        "clarify_notices_queued",
        "Notices waiting to be sent, by channel.",
    ),
    (
        "clarify_notices_oldest_seconds",
        "The age of the oldest notice waiting to be sent, by channel.",
    ),
    (
        "clarify_channel_up",
        "Whether each channel's connection out is up (1) or not (0).",
    ),
    (
        "clarify_wake_seconds",
        "From a bundle's answer to its blocked agent's wait waking on this replica.",
    ),
    (
        "clarify_relay_lag_seconds",
        "From a replica relaying a message (a wake, an event) to this one applying it (PostgreSQL).",
    ),
    (
        "clarify_connections_held",
        "TCP connections this server holds now.",
    ),
    (
        "clarify_tasks_alive",
        "Tasks alive on this server's runtime now (each held connection is one; what grows without connections is a leak).",
    ),
    (
        "clarify_mcp_sessions",
        "MCP sessions open on this replica now.",
    ),
    (
        "clarify_http_requests_total",
        "HTTP requests, by route and status.",
    ),
    (
        "clarify_http_request_seconds",
        "HTTP request durations, by route.",
    ),
];

fn key(name: &'static str, labels: &[(&'static str, String)]) -> Key {
    let labels: Vec<Label> = labels
        .iter()
        .map(|(k, v)| Label::new(*k, v.clone()))
        .collect();
    Key::from_parts(name, labels)
}

impl Measure {
    /// Adds one to counter `name` with `labels`.
    pub fn count(&self, name: &'static str, labels: &[(&'static str, String)]) {
        self.0
            .register_counter(&key(name, labels), &METADATA)
            .increment(1);
    }

    /// Records `elapsed` in histogram `name` with `labels`.
    pub fn observe(
        &self,
        name: &'static str,
        labels: &[(&'static str, String)],
        elapsed: Duration,
    ) {
        self.0
            .register_histogram(&key(name, labels), &METADATA)
            .record(elapsed.as_secs_f64());
    }

    /// Sets gauge `name` with `labels` to `value`.
    pub fn set(&self, name: &'static str, labels: &[(&'static str, String)], value: f64) {
        self.0
            .register_gauge(&key(name, labels), &METADATA)
            .set(value);
    }

    /// Gauge `name` with `labels`, read by `read` at each scrape.
    pub fn probe(&self, name: &'static str, labels: Vec<(&'static str, String)>, read: Read) {
        self.1.add(name, labels, read);
    }

    /// The exposition, as `GET /metrics` answers it, the probes read now.
    #[must_use]
    pub fn render(&self) -> String {
        for (name, labels, value) in self.1.read() {
            self.set(name, &labels, value);
        }
        self.0.handle().render()
    }

    /// `question` or `approval`: a bundle's kind from its messages.
    #[must_use]
    pub fn kind_of(messages: &[clarify_core::stored::StoredMessage]) -> &'static str {
        if clarify_core::approval::bundle_tool_call(messages).is_some() {
            "approval"
        } else {
            "question"
        }
    }

    /// A resume dispatched to `target`, `accepted` or not.
    pub fn resumed(&self, target: &clarify_core::api::ResumeTarget, accepted: bool) {
        let kind = match target {
            clarify_core::api::ResumeTarget::Webhook { .. } => "webhook",
            clarify_core::api::ResumeTarget::Command { .. } => "command",
        };
        let outcome = if accepted { "accepted" } else { "refused" };
        let labels = [("target", kind.to_owned()), ("outcome", outcome.to_owned())];
        self.count("clarify_resume_dispatches_total", &labels);
    }

    /// A bundle asked.
    pub fn asked(&self, kind: &str) {
        self.count(
            "clarify_questions_asked_total",
            &[("kind", kind.to_owned())],
        );
    }

    /// A bundle settled `outcome` through `channel`, `waited` after it was
    /// asked (`None` for an ending nobody chose: expiry, cancel).
    pub fn settled(&self, outcome: &str, channel: &str, kind: &str, waited: Option<Duration>) {
        let labels = [
            ("outcome", outcome.to_owned()),
            ("channel", channel.to_owned()),
            ("kind", kind.to_owned()),
        ];
        self.count("clarify_questions_settled_total", &labels);
        if let Some(waited) = waited {
            self.observe("clarify_time_to_answer_seconds", &labels[..1], waited);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_keeps_its_own_figures() {
        let (one, two) = (Measure::default(), Measure::default());
        one.asked("question");
        one.settled(
            "answered",
            "rest",
            "question",
            Some(Duration::from_millis(1500)),
        );
        let text = one.render();
        assert!(
            text.contains("clarify_questions_asked_total{kind=\"question\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("clarify_time_to_answer_seconds_bucket{outcome=\"answered\",le=\"5\"} 1"),
            "{text}"
        );
        assert!(!two.render().contains("clarify_questions_asked_total"));
    }
}
