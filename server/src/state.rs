//! Shared state handed to every request handler.

/// Cheap to clone: axum clones it into each handler, so anything heavy
/// added here belongs behind an `Arc`.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct AppState {}

impl AppState {
    /// State with nothing configured yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}
