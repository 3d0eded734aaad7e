//! The `clarify` binary, built inside the test crate so that process-level
//! tests (kill -9, restart) can find it through `CARGO_BIN_EXE_*`. It is the
//! same entry point as `server/src/main.rs`.

use std::process::ExitCode;

use clap::Parser as _;
use clarify_server::cli::{Cli, run};

#[tokio::main]
async fn main() -> ExitCode {
    run(Cli::parse()).await
}
