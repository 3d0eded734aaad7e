//! The `clarify` command line: flags (each also an environment variable) and
//! the subcommands they drive.

pub mod answer;
pub mod ask;
pub mod audit;
pub mod backup;
pub mod demo;
pub mod hook;
pub mod hooks;
mod logging;
pub mod mcp;
mod notify_args;
mod oidc_args;
mod parse;
mod reach;
mod serve;
pub mod session;
pub mod token;
pub mod workspace;

use std::io::Write as _;
use std::{net::SocketAddr, process::ExitCode};

use clap::{Args, Parser, Subcommand, builder::BoolishValueParser};
pub use logging::{LogFormat, LogLevel};
pub use notify_args::NotifyArgs;

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
    Serve(Box<ServeArgs>),
    /// Ask a human from a shell or script and print the answer as JSON.
    /// Exit codes: 0 answered, 3 declined, 4 gave up waiting (the question
    /// stays open), 5 closed without an answer, 1 error.
    Ask(ask::AskArgs),
    /// List the questions waiting for you, as JSON.
    Pending(answer::PendingArgs),
    /// Answer (or --reject) a waiting bundle. Exit codes: 0 your answer
    /// won, 2 someone else's had (it is printed), 1 error.
    Answer(answer::AnswerArgs),
    /// A stdio MCP server for agents: `ask_user_question_kandev`, asked
    /// through the running server (`claude mcp add clarify -- clarify mcp`).
    Mcp(mcp::McpArgs),
    /// For Claude Code's and Codex's hooks: reads the hook's JSON on
    /// stdin, asks through the running server, prints the hook's answer.
    Hook(hook::HookArgs),
    /// Install or uninstall Clarify's hooks in Claude Code or Codex.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// Agent sessions.
    #[command(subcommand)]
    Session(session::SessionCommand),
    /// Manage personal access tokens (for `--auth`).
    #[command(subcommand)]
    Token(token::TokenCommand),
    /// Workspaces: where an unowned one's notices go.
    #[command(subcommand)]
    Workspace(workspace::WorkspaceCommand),
    /// Write the audit export of a running server (every question, who
    /// asked and answered, how, when, and every attempt that lost).
    Audit(audit::AuditArgs),
    /// Copy a running server's SQLite database into a new FILE,
    /// consistent as of one instant (PostgreSQL: use pg_dump).
    Backup(backup::BackupArgs),
    /// Put the copy FILE back as the SQLite database; refused while a
    /// server has it open, or when the copy is damaged or newer than this
    /// clarify.
    Restore(backup::BackupArgs),
}

/// Where the data lives.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// `sqlite://…` or `postgres://…`; a SQLite file in the working
    /// directory when omitted.
    #[arg(long, env = "CLARIFY_DATABASE_URL")]
    pub database_url: Option<String>,

    /// SQLite only: `full` (the default) flushes every commit to disk, so
    /// an answer acknowledged survives a power loss; `normal` is faster
    /// but a crash of the machine (not of the process) can lose the last
    /// commits, answers already acknowledged among them.
    #[arg(long, env = "CLARIFY_SQLITE_SYNCHRONOUS", value_enum, default_value_t = SqliteSynchronous::Full)]
    pub sqlite_synchronous: SqliteSynchronous,
}

/// `--sqlite-synchronous`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SqliteSynchronous {
    /// Every commit on disk before it is acknowledged.
    Full,
    /// Commits on disk at checkpoints only.
    Normal,
}

impl DatabaseArgs {
    async fn open(&self) -> Result<crate::db::Db, String> {
        let url = self
            .database_url
            .as_deref()
            .unwrap_or(crate::db::DEFAULT_DATABASE_URL);
        let synchronous = match self.sqlite_synchronous {
            SqliteSynchronous::Full => crate::db::Synchronous::Full,
            SqliteSynchronous::Normal => crate::db::Synchronous::Normal,
        };
        crate::db::Db::connect_with(url, crate::db::Options { synchronous })
            .await
            .map_err(|e| format!("cannot open the database: {e}"))
    }
}

/// Flags for `clarify serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, env = "CLARIFY_LISTEN", default_value = "127.0.0.1:7420")]
    pub listen: SocketAddr,

    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Require a personal access token on every request.
    // Boolish so that `CLARIFY_AUTH=1`/`yes`/`on` work, not only `true`.
    #[arg(long, env = "CLARIFY_AUTH", value_parser = BoolishValueParser::new())]
    pub auth: bool,

    /// An origin (e.g. `http://localhost:3000`) allowed to call the API with
    /// credentials, for a web client served from elsewhere.
    #[arg(long, env = "CLARIFY_CORS_ORIGIN")]
    pub cors_origin: Option<String>,

    /// A host name browsers and tools reach this server by, besides
    /// localhost and IP addresses (behind a proxy, say); requests naming
    /// any other `Host` are refused, against DNS rebinding. Repeat the
    /// flag, or separate with commas in the variable.
    // `--mcp-allowed-host` was its name when only MCP checked the Host.
    #[arg(
        long = "allowed-host",
        alias = "mcp-allowed-host",
        env = "CLARIFY_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,

    /// Connections held at once at most; beyond it, a new connection takes
    /// the place of the oldest one that has not sent a request yet, or is
    /// closed at once. All but 256 of the open-file limit (raised to its
    /// hard limit at start) by default.
    #[arg(long, value_name = "N", env = "CLARIFY_MAX_CONNECTIONS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: Option<u64>,

    /// Sessions one user may have open (not yet ended) at once; beyond it,
    /// creating one is refused (429). A user's long waits (`/wait`, a
    /// blocked ask over MCP) are bounded at twice this. Without `--auth`
    /// the machine's owner is the one user.
    #[arg(long, value_name = "N", env = "CLARIFY_MAX_OPEN_SESSIONS",
          default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_open_sessions: u64,

    /// Questions one user (with their agents) may keep open (unanswered)
    /// under `--auth`; beyond, an ask is refused (429).
    #[arg(long, value_name = "N", env = "CLARIFY_MAX_OPEN_QUESTIONS",
          default_value_t = crate::lifecycle::MAX_OPEN_QUESTIONS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_open_questions: u32,

    /// New asks one user (with their agents) may make at once under
    /// `--auth`, before `--asks-per-minute` paces them (429 with
    /// `Retry-After` beyond).
    #[arg(long, value_name = "N", env = "CLARIFY_ASK_BURST",
          default_value_t = crate::lifecycle::ASK_BURST,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub ask_burst: u32,

    /// New asks per minute one user (with their agents) may make under
    /// `--auth` once their burst is spent.
    #[arg(long, value_name = "N", env = "CLARIFY_ASKS_PER_MINUTE",
          default_value_t = crate::lifecycle::ASKS_PER_MINUTE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub asks_per_minute: u32,

    /// A program that a session's resume command may start, by its full
    /// path (repeat the flag, or separate with commas in the variable).
    /// None by default: whoever creates a session names its command, so
    /// only the operator may decide what runs.
    #[arg(
        long = "allow-resume-command",
        value_name = "PROGRAM",
        env = "CLARIFY_ALLOW_RESUME_COMMANDS",
        value_delimiter = ',',
        value_parser = parse::absolute_path
    )]
    pub allow_resume_commands: Vec<String>,

    /// Seconds a resume command may run before it is killed.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "CLARIFY_RESUME_COMMAND_TIMEOUT",
        default_value_t = 600,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub resume_command_timeout: u64,

    /// How many resume commands run at once at most; the others wait their
    /// turn, in order, and none is dropped.
    #[arg(
        long,
        value_name = "N",
        env = "CLARIFY_RESUME_COMMAND_CONCURRENCY",
        default_value_t = 4,
        value_parser = clap::value_parser!(u64).range(1..=1024)
    )]
    pub resume_command_concurrency: u64,

    /// Questions whose ask names no time expire unanswered after this long
    /// ("30m", "2h", "1d"); never by default.
    #[arg(
        long,
        value_name = "DURATION",
        env = "CLARIFY_QUESTION_TTL",
        value_parser = humantime::parse_duration
    )]
    pub question_ttl: Option<std::time::Duration>,

    /// With --auth, let resume webhooks reach this internal network
    /// (loopback, private or link-local, refused by default), as CIDR or a
    /// single address (repeat the flag, or separate with commas in the
    /// variable).
    #[arg(
        long = "allow-webhook-network",
        value_name = "CIDR",
        env = "CLARIFY_ALLOW_WEBHOOK_NETWORKS",
        value_delimiter = ',',
        value_parser = parse::network
    )]
    pub allow_webhook_networks: Vec<ipnet::IpNet>,

    #[command(flatten)]
    pub notify: NotifyArgs,

    #[command(flatten)]
    pub oidc: oidc_args::OidcArgs,

    /// This server's URL as people reach it (behind a proxy, say), for the
    /// links in notices; the listening address when unset.
    #[arg(long, value_name = "URL", env = "CLARIFY_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Serve the operator's metrics at /metrics on this port (Prometheus's
    /// text format); under --auth only an admin's token reads them.
    #[arg(long, env = "CLARIFY_METRICS", value_parser = BoolishValueParser::new())]
    pub metrics: bool,

    /// Serve /metrics on this address of its own instead, without a
    /// credential: for a network only the scraper reaches.
    #[arg(long, env = "CLARIFY_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,

    /// Also run a built-in demo agent that asks you questions (see the
    /// lines it prints).
    #[arg(long)]
    pub demo: bool,

    /// How long the demo agent waits on its second question before moving on.
    #[arg(long, default_value_t = 30, hide = true)]
    pub demo_patience: u64,

    /// Log format on stderr.
    #[arg(long, env = "CLARIFY_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// What is logged on stderr when `RUST_LOG` is not set. One line per
    /// request is `debug`; `info` keeps what a person needs: the listening
    /// line, lifecycle events, warnings.
    #[arg(long, env = "CLARIFY_LOG_LEVEL", value_enum, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
}

/// Runs the parsed command line to completion.
pub async fn run(cli: Cli) -> ExitCode {
    let command = cli
        .command
        .unwrap_or_else(|| Command::Serve(Box::new(cli.serve)));
    let (format, level) = match &command {
        Command::Serve(args) => (args.log_format, args.log_level),
        _ => (LogFormat::Text, LogLevel::Info),
    };
    logging::init(format, level);
    let result = match command {
        Command::Ask(args) => return ask::run(args).await,
        Command::Mcp(args) => return mcp::run(args).await,
        Command::Audit(args) => return audit::run(args).await,
        Command::Hook(args) => return hook::run(args).await,
        Command::Hooks(command) => return hooks::run(&command),
        Command::Pending(args) => return answer::pending(args).await,
        Command::Answer(args) => return answer::answer(args).await,
        Command::Session(command) => return session::run(command).await,
        Command::Serve(args) => serve::serve(*args).await,
        Command::Token(command) => token::run(command).await,
        Command::Workspace(command) => workspace::run(command).await,
        Command::Backup(args) => backup::backup(args).await,
        Command::Restore(args) => backup::restore(args).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// The whole `clarify` program: parses the command line and runs it on a
/// multi-threaded runtime. Here rather than in `main.rs` under
/// `#[tokio::main]`: a binary that polls the library's futures compiles
/// the whole program a second time, on one thread, in the binary (issue
/// 25: the release binary alone took 63 s to rebuild, 0.9 s now).
#[inline(never)]
#[must_use]
pub fn main() -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(run(Cli::parse())),
        Err(error) => {
            let _ = writeln!(
                std::io::stderr(),
                "clarify: cannot start the runtime: {error}"
            );
            ExitCode::FAILURE
        }
    }
}
