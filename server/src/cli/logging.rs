//! How `clarify` logs: on stderr, as text or JSON lines, at a level a
//! flag or `RUST_LOG` sets.

use std::io::IsTerminal as _;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How much is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// Lifecycle events too (the default).
    Info,
    /// Every request too.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    fn directive(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// `RUST_LOG` (`warn`, `clarify_server=debug,tower_http=info`) when set and
/// readable, else `--log-level`. Read as `Targets`, not `EnvFilter`: the
/// same directives but for span and field filters, without the regex
/// engine `EnvFilter` compiles in (issue 25: the first build).
fn filter(level: LogLevel) -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| level.directive().parse().unwrap_or_else(|_| Targets::new()))
}

/// Starts logging as `format` at `level`.
pub(super) fn init(format: LogFormat, level: LogLevel) {
    let registry = tracing_subscriber::registry().with(filter(level));
    let layer = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    match format {
        LogFormat::Json => registry.with(layer.json()).init(),
        // Colour codes would litter logs captured by test harnesses and
        // supervisors.
        LogFormat::Text => registry
            .with(layer.with_ansi(std::io::stderr().is_terminal()))
            .init(),
    }
}
