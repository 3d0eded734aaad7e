//! What the benchmarks share: their sizes from the environment, and how
//! they read a set of latencies.

use std::time::Duration;

/// The whole number in environment variable `name`, else `default`.
#[must_use]
pub fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// p50, p99 and the largest of `samples`, in milliseconds.
///
/// # Panics
/// When `samples` is empty.
#[must_use]
pub fn percentiles(mut samples: Vec<Duration>) -> (f64, f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)];
    (ms(at(50)), ms(at(99)), ms(samples[samples.len() - 1]))
}

/// The server binary a bench runs: `built` (its `CARGO_BIN_EXE_*`), or
/// `BENCH_BIN` when set, another build measured alike (a baseline).
#[must_use]
pub fn server_binary(built: &str) -> String {
    std::env::var("BENCH_BIN")
        .ok()
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| built.to_owned())
}
