//! Gauges read where they live, at each scrape: connections held, MCP
//! sessions open — figures another part of the server already keeps, so
//! nothing is counted twice and nothing is done between scrapes.

use std::sync::{Arc, Mutex, PoisonError};

/// Reads a figure now; `None` when it cannot be read without waiting (the
/// gauge keeps its last value).
pub type Read = Box<dyn Fn() -> Option<f64> + Send + Sync>;

/// A gauge's labels.
pub type Labels = Vec<(&'static str, String)>;

/// One gauge's name, labels and how to read it.
struct Probe {
    name: &'static str,
    labels: Labels,
    read: Read,
}

/// Every probe a server registered.
#[derive(Clone, Default)]
pub struct Probes(Arc<Mutex<Vec<Probe>>>);

impl Probes {
    /// Adds gauge `name` with `labels`, read by `read` at each scrape.
    pub fn add(&self, name: &'static str, labels: Labels, read: Read) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Probe { name, labels, read });
    }

    /// Each probe's reading, for the gauges set before a render.
    pub fn read(&self) -> Vec<(&'static str, Labels, f64)> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(|p| (p.read)().map(|value| (p.name, p.labels.clone(), value)))
            .collect()
    }
}
