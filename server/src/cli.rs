//! The `clarify` command line: flags (each also an environment variable) and
//! the subcommands they drive.

use std::{
    io::{IsTerminal as _, Write as _},
    net::SocketAddr,
    process::ExitCode,
};

use clap::{Args, Parser, Subcommand, builder::BoolishValueParser};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

use crate::AppState;

/// Self-hosted clarification questions for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "clarify", version, about)]
// `clarify --listen …` and `clarify serve --listen …` both work; mixing the
// two forms would be ambiguous.
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub serve: ServeArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (the default).
    Serve(ServeArgs),
}

/// Flags for `clarify serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, env = "CLARIFY_LISTEN", default_value = "127.0.0.1:7420")]
    pub listen: SocketAddr,

    /// `sqlite://…` or `postgres://…`; a SQLite file in the working
    /// directory when omitted.
    #[arg(long, env = "CLARIFY_DATABASE_URL")]
    pub database_url: Option<String>,

    /// Require a personal access token on every request.
    // Boolish so that `CLARIFY_AUTH=1`/`yes`/`on` work, not only `true`.
    #[arg(long, env = "CLARIFY_AUTH", value_parser = BoolishValueParser::new())]
    pub auth: bool,
}

/// Runs the parsed command line to completion.
pub async fn run(cli: Cli) -> ExitCode {
    init_tracing();
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    let result = match command {
        Command::Serve(args) => serve(args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    // The database opens first: once "listening on" is printed, every route works.
    let url = args
        .database_url
        .as_deref()
        .unwrap_or(crate::db::DEFAULT_DATABASE_URL);
    let db = crate::db::Db::connect(url)
        .await
        .map_err(|e| format!("cannot open the database: {e}"))?;
    let state = AppState::new(db)
        .await
        .map_err(|e| format!("cannot start: {e}"))?;
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    // Test harnesses and scripts wait for this exact line to learn the port,
    // so it goes to stdout (logs go to stderr) and is flushed at once.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on http://{addr}")
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))?;
    drop(stdout);

    crate::serve(listener, state, shutdown_signal())
        .await
        .map_err(|e| format!("server failed: {e}"))
}

fn init_tracing() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes would litter logs captured by test harnesses and
        // supervisors.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// Resolves on Ctrl-C or, on Unix, SIGTERM (what process supervisors send).
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut sigterm) => {
                sigterm.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();

    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutting down");
}
