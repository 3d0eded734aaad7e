//! Shared state handed to every request handler.

use crate::auth::seal::SealKey;
use crate::channels::keeper::{self, Statuses};
use crate::channels::{Channels, Sender, discord, ntfy, slack, telegram};
use crate::clock::{micros, now_micros};
use crate::cluster::Cluster;
use crate::db::Db;
use crate::db::clarification::Guard;
use crate::events::Events;
use crate::ids::Secret;
use crate::lifecycle::{EXPIRY_EVERY, Error, Lifecycle, ORPHAN_AFTER, SWEEP_EVERY};
use crate::waiters::Waiters;

mod channels;
mod resumer;

/// How the server was started.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Require an identity on every API request.
    pub auth: bool,
    /// An origin allowed to call the API with credentials (split-origin
    /// development); none by default.
    pub cors_origin: Option<String>,
    /// Host names this server answers to besides `localhost` and IP
    /// addresses (every other `Host` is refused, against DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Programs a session's resume command may start, by exact path; none
    /// when empty.
    pub allowed_resume_commands: Vec<String>,
    /// How long a resume command may run before it is killed;
    /// [`COMMAND_TIMEOUT`](crate::resume::COMMAND_TIMEOUT) when unset.
    pub resume_command_timeout: Option<std::time::Duration>,
    /// How many resume commands run at once at most
    /// (`--resume-command-concurrency`); [`COMMAND_CONCURRENCY`](crate::resume::COMMAND_CONCURRENCY) when unset.
    pub resume_command_concurrency: Option<usize>,
    /// Internal networks (loopback, private, link-local) that resume
    /// webhooks may reach with auth on; with auth off they all may.
    pub allowed_webhook_networks: Vec<ipnet::IpNet>,
    /// Sockets this process serves itself that webhooks may always reach
    /// (the demo agent's own webhook).
    pub own_webhook_sockets: Vec<std::net::SocketAddr>,
    /// How often a blocked `ask_user_question_kandev` reports progress;
    /// 10 s when unset.
    pub progress_interval: Option<std::time::Duration>,
    /// How often the server looks for claims abandoned mid-delivery (a
    /// replica died, or the database refused a delivery's writes and their
    /// rollback alike: R6); [`SWEEP_EVERY`] when unset.
    pub sweep_interval: Option<std::time::Duration>,
    /// Live MCP sessions one user (with their agents) may hold; when
    /// unset, 16 under auth and 256 without (every client is then the one
    /// caller).
    pub mcp_sessions_per_user: Option<usize>,
    /// Open (non-terminal) sessions one user may have created
    /// (`--max-open-sessions`); [`crate::quota::MAX_OPEN_SESSIONS`] when unset. Long
    /// waits per user are bounded at twice this.
    pub max_open_sessions: Option<usize>,
    /// What one user (with their agents) may ask under auth: open
    /// questions and asks at once and per minute (`--max-open-questions`,
    /// `--ask-burst`, `--asks-per-minute`).
    pub ask_limits: crate::lifecycle::AskLimits,
    /// Event sockets one user (with their agents) may hold open; 64 when
    /// unset.
    pub ws_per_user: Option<usize>,
    /// Connections the server holds at once at most
    /// (`--max-connections`); when unset, all but
    /// [`crate::serve::FILE_HEADROOM`] of the open-file limit, raised to
    /// its hard limit at start.
    pub max_connections: Option<usize>,
    /// How long a request's headers may take
    /// ([`crate::serve::HEADER_TIMEOUT`] when unset; tests shorten it).
    pub header_timeout: Option<std::time::Duration>,
    /// How long a request's body may take once its headers came, longer
    /// for a large one that keeps coming ([`crate::serve::BODY_TIMEOUT`]
    /// when unset; tests shorten it).
    pub body_timeout: Option<std::time::Duration>,
    /// Event sockets the server holds open at most; 4096 when unset.
    pub ws_total: Option<usize>,
    /// How long a claim must sit untouched before the sweep takes it for
    /// abandoned; [`ORPHAN_AFTER`] when unset (tests shorten it).
    pub orphan_after: Option<std::time::Duration>,
    /// When a question whose ask names no time expires (`--question-ttl`);
    /// never when unset.
    pub question_ttl: Option<std::time::Duration>,
    /// Webhooks told of every bundle that waits, is resolved, expires or
    /// is cancelled, and reminded before expiry (`--notify-webhook`); each
    /// workspace may add its own.
    pub notify_webhooks: Vec<String>,
    /// ntfy topics (`https://ntfy.sh/your-topic`) told the same, with a
    /// button per option (`--notify-ntfy`).
    pub notify_ntfy: Vec<String>,
    /// The access token ntfy topics are published with (`CLARIFY_NTFY_TOKEN`).
    pub ntfy_token: Option<Secret>,
    /// The Slack app's bot token (`--slack-bot-token`): waiting bundles
    /// are posted to `slack_channel` with buttons.
    pub slack_bot_token: Option<Secret>,
    /// The Slack app's signing secret, checking button presses.
    pub slack_signing_secret: Option<Secret>,
    /// The channel posted to (an id such as `C0123`, or `#name`).
    pub slack_channel: Option<String>,
    /// The Slack app-level token (`xapp-…`): presses over Socket Mode, no
    /// signing secret needed (issue 48 item 1).
    pub slack_app_token: Option<Secret>,
    /// Slack's Web API base URL; `https://slack.com/api` when unset.
    pub slack_api_url: Option<String>,
    /// The Telegram bot's token (`--telegram-bot-token`): waiting bundles
    /// are sent to `telegram_chat_id` with buttons.
    pub telegram_bot_token: Option<Secret>,
    /// The chat sent to.
    pub telegram_chat_id: Option<String>,
    /// The secret Telegram sends with each update (`setWebhook`'s
    /// `secret_token`).
    pub telegram_webhook_secret: Option<Secret>,
    /// Telegram's Bot API base URL; `https://api.telegram.org` when unset.
    pub telegram_api_url: Option<String>,
    /// The Discord bot, its buttons pressed over its gateway (issue 48).
    pub discord: discord::Flags,
    /// The server's URL as people reach it, for the links in notices
    /// (`--public-url`); `http://localhost:7420` when unset.
    pub public_url: Option<String>,
    /// The first retry's delay for a notice; [`FIRST_RETRY`](crate::channels::FIRST_RETRY) when unset
    /// (tests shorten it).
    pub notify_first_retry: Option<std::time::Duration>,
    /// How long a channel's lease lasts unless renewed (issue 48 item 2);
    /// [`keeper::LEASE`] when unset (tests shorten it).
    pub channel_lease: Option<std::time::Duration>,
    /// Keep the operator's figures and serve them (`--metrics`,
    /// `--metrics-listen`; issue 49 item 1).
    pub metrics: bool,
    /// Sign-in with the team's OpenID provider (issue 49 item 3).
    pub oidc: Option<crate::oidc::Settings>,
}

impl Config {
    /// Open sessions one user may have created.
    #[must_use]
    pub fn max_open_sessions(&self) -> usize {
        self.max_open_sessions
            .unwrap_or(crate::quota::MAX_OPEN_SESSIONS)
    }
}

/// What every handler shares, behind one `Arc`: extracting it (each
/// middleware and handler does, once a request) copies a pointer. By value
/// it was a deep clone of [`Config`] that every request held for as long
/// as it lived, a long poll's two minutes included (issue 31 item 3).
#[derive(Clone, Debug)]
pub struct AppState(std::sync::Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The server's state, read through [`AppState`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Shared {
    /// The clarification lifecycle (and through it the database).
    pub lifecycle: Lifecycle,
    /// Live events for browsers.
    pub events: Events,
    /// How the server was started.
    pub config: Config,
    /// Every way a notice leaves; what tells a chat's presser.
    pub channels: Channels,
    /// Cancelled when the server shuts down: ends open MCP streams,
    /// WebSockets and long polls so that shutdown does not wait on them.
    pub shutdown: tokio_util::sync::CancellationToken,
    /// Seals what a client carries for the server (an MCP `requestState`).
    pub seal_key: SealKey,
    /// What each channel's connection is doing (issue 48 item 4).
    pub statuses: Statuses,
    /// The operator's figures (issue 49 item 1).
    pub measure: crate::measure::Measure,
    /// The identity provider browsers sign in with, when configured.
    pub oidc: Option<std::sync::Arc<crate::oidc::Oidc>>,
}

impl AppState {
    /// State over an open database. Joins the other replicas, if any, and
    /// runs start-up reconciliation (R6).
    ///
    /// # Errors
    /// A `--notify-webhook` the network policy refuses; database errors
    /// during reconciliation.
    pub async fn new(db: Db, config: Config) -> Result<Self, Error> {
        let measure = crate::measure::Measure::default();
        let resumer = config.resumer();
        // The provider is the operator's, reached like their chat APIs:
        // through the webhooks' client and network policy.
        let oidc = config.oidc.clone().map(|settings| {
            std::sync::Arc::new(crate::oidc::Oidc::new(settings, resumer.webhooks().clone()))
        });
        let channels = ntfy::with_replies(config.channels(&resumer)?, &db).await?;
        let shutdown = tokio_util::sync::CancellationToken::new();
        let waiters = Waiters::default();
        let here = Events::default();
        let cluster = Cluster::join(&db, &waiters, &here, &measure, &shutdown).await?;
        let events = here.relayed_to(cluster.outbound());
        let shared = db.backend().shared();
        let lifecycle = Lifecycle::new(
            db,
            waiters,
            events.clone(),
            cluster,
            resumer,
            shutdown.clone(),
            crate::lifecycle::Settings {
                question_ttl: config.question_ttl,
                // Without auth every session is the one trusted user's.
                ask_limits: config.auth.then_some(config.ask_limits),
                waits_per_user: Some(config.max_open_sessions().saturating_mul(2)),
                notifications: Some(std::sync::Arc::new(channels.clone())),
                measure: measure.clone(),
            },
        );
        let reconciled = if shared {
            // Other replicas may be delivering their claims right now: only
            // the abandoned ones are reconciled, now and from time to time.
            let cutoff = now_micros() - micros(ORPHAN_AFTER);
            lifecycle
                .sweeps
                .reconcile(Guard::UntouchedBefore(cutoff))
                .await
        } else {
            lifecycle.sweeps.reconcile(Guard::Any).await
        };
        if let Err(error) = reconciled {
            // Nothing will serve: stop what joining the replicas started.
            shutdown.cancel();
            return Err(error);
        }
        // On every backend: a claim whose delivery failed and could not
        // even be taken back (the database refused both) is mended here,
        // not at the next restart.
        let every = config.sweep_interval.unwrap_or(SWEEP_EVERY);
        let orphan_after = config.orphan_after.unwrap_or(ORPHAN_AFTER);
        tokio::spawn(lifecycle.sweeps.clone().sweep_abandoned(
            every,
            orphan_after,
            shutdown.clone(),
        ));
        tokio::spawn(
            lifecycle
                .sweeps
                .clone()
                .sweep_expired(EXPIRY_EVERY, shutdown.clone()),
        );
        let sender = Sender::new(lifecycle.db().clone(), channels.clone(), measure.clone());
        tokio::spawn(sender.run(shutdown.clone()));
        // Each channel's connection out (issue 48): started here, reported
        // through its keeper.
        let statuses = Statuses::default();
        if let Some(token) = &config.slack_app_token {
            let keeper = statuses.keeper("slack", "socket mode");
            slack::socket::start(token, &channels, &lifecycle, keeper, &shutdown);
        }
        let lease = config.channel_lease.unwrap_or(keeper::LEASE);
        if config.telegram_webhook_secret.is_none() {
            telegram::poll::start(&channels, &lifecycle, &statuses, lease, &shutdown);
        }
        ntfy::Replies::start(&channels, &lifecycle, &statuses, Some(lease), &shutdown);
        discord::start(&channels, &lifecycle, &statuses, Some(lease), &shutdown);
        let seal_key = SealKey::load(lifecycle.db()).await?;
        Ok(Self(std::sync::Arc::new(Shared {
            lifecycle,
            events,
            config,
            channels,
            shutdown,
            seal_key,
            statuses,
            measure,
            oidc,
        })))
    }

    /// The database.
    #[must_use]
    pub fn db(&self) -> &Db {
        self.lifecycle.db()
    }

    /// How long a channel's lease lasts.
    #[must_use]
    pub fn channel_lease(&self) -> std::time::Duration {
        self.config.channel_lease.unwrap_or(keeper::LEASE)
    }
}
