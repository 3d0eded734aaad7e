//! The `clarify` binary; everything but the runtime lives in the library.

use std::process::ExitCode;

use clap::Parser as _;
use clarify_server::cli::{Cli, run};

#[tokio::main]
async fn main() -> ExitCode {
    run(Cli::parse()).await
}
