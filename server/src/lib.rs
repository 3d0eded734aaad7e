//! Clarify's server: the HTTP API, the MCP surfaces and the web overlay,
//! assembled into one axum [`Router`](axum::Router) by [`app()`] and run by
//! [`serve()`] (both in the composition root, `app.rs`).
//!
//! This file is the crate's face only: the modules, and re-exports for
//! the binary and the tests. Code inside the crate imports each item from
//! its own module (`crate::state::AppState`), never through these
//! re-exports, so the module graph that `tests/tests/architecture.rs`
//! checks for circles is the real one.

pub mod activity;
mod app;
pub mod auth;
pub mod channels;
pub mod cli;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod db;
pub mod events;
pub mod http;
pub mod ids;
pub mod lifecycle;
pub mod markdown;
pub mod mcp;
pub mod measure;
pub mod oidc;
pub mod quota;
pub mod resume;
pub mod serve;
pub mod state;
pub mod waiters;
mod web_assets;

pub use app::{app, serve};
pub use ids::Secret;
pub use ipnet::IpNet;
pub use state::{AppState, Config};
