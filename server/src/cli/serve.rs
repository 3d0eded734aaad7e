//! `clarify serve`: opens the database, binds the listener, starts the
//! state and serves until Ctrl-C or SIGTERM.

use std::io::Write as _;

use tokio::net::TcpListener;

use super::{ServeArgs, demo};
use crate::state::AppState;

pub(super) async fn serve(args: ServeArgs) -> Result<(), String> {
    // Flags that cannot work together stop the start before anything opens.
    let oidc = args.oidc.settings(args.auth, args.public_url.as_deref())?;
    // The database opens first: once "listening on" is printed, every route works.
    let db = args.database.open().await?;
    // The demo agent's webhook is this process's own: bound first, so the
    // server can let webhooks reach exactly it.
    let demo_webhook = if args.demo {
        Some(demo::bind_webhook().await?)
    } else {
        None
    };
    let own_webhook_sockets = demo_webhook
        .iter()
        .filter_map(|listener| listener.local_addr().ok())
        .collect();
    let mut allowed_hosts = args.allowed_hosts.clone();
    // The old variable still works.
    if let Ok(old) = std::env::var("CLARIFY_MCP_ALLOWED_HOSTS") {
        allowed_hosts.extend(
            old.split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(str::to_owned),
        );
    }
    // Bound first, like the API's: a port that is taken stops the start.
    let metrics_listener = match args.metrics_listen {
        Some(at) => Some(
            TcpListener::bind(at)
                .await
                .map_err(|e| format!("cannot listen on {at} (--metrics-listen): {e}"))?,
        ),
        None => None,
    };
    // Bound before the state starts, so notices can link to the real port.
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    let public_url = args.public_url.clone().unwrap_or_else(|| {
        if addr.ip().is_unspecified() {
            format!("http://localhost:{}", addr.port())
        } else {
            format!("http://{addr}")
        }
    });
    let config = crate::state::Config {
        auth: args.auth,
        cors_origin: args.cors_origin.clone(),
        allowed_hosts,
        allowed_resume_commands: args.allow_resume_commands.clone(),
        resume_command_timeout: Some(std::time::Duration::from_secs(args.resume_command_timeout)),
        resume_command_concurrency: usize::try_from(args.resume_command_concurrency).ok(),
        allowed_webhook_networks: args.allow_webhook_networks.clone(),
        own_webhook_sockets,
        progress_interval: None,
        sweep_interval: None,
        orphan_after: None,
        ws_per_user: None,
        mcp_sessions_per_user: None,
        max_open_sessions: usize::try_from(args.max_open_sessions).ok(),
        ask_limits: crate::lifecycle::AskLimits {
            max_open_questions: args.max_open_questions,
            burst: args.ask_burst,
            per_minute: args.asks_per_minute,
        },
        ws_total: None,
        max_connections: args.max_connections.and_then(|n| usize::try_from(n).ok()),
        header_timeout: None,
        body_timeout: None,
        question_ttl: args.question_ttl,
        notify_webhooks: args.notify.notify_webhooks.clone(),
        notify_ntfy: args.notify.notify_ntfy.clone(),
        ntfy_token: secret(args.notify.ntfy_token.as_ref()),
        slack_bot_token: secret(args.notify.slack_bot_token.as_ref()),
        slack_signing_secret: secret(args.notify.slack_signing_secret.as_ref()),
        slack_channel: args.notify.slack_channel.clone(),
        slack_app_token: secret(args.notify.slack_app_token.as_ref()),
        slack_api_url: Some(args.notify.slack_api_url.clone()),
        telegram_bot_token: secret(args.notify.telegram_bot_token.as_ref()),
        telegram_chat_id: args.notify.telegram_chat_id.clone(),
        telegram_webhook_secret: secret(args.notify.telegram_webhook_secret.as_ref()),
        telegram_api_url: Some(args.notify.telegram_api_url.clone()),
        discord: crate::channels::discord::Flags {
            bot_token: secret(args.notify.discord_bot_token.as_ref()),
            channel: args.notify.discord_channel.clone(),
            api_url: Some(args.notify.discord_api_url.clone()),
        },
        public_url: Some(public_url),
        notify_first_retry: None,
        channel_lease: None,
        metrics: args.metrics || args.metrics_listen.is_some(),
        oidc,
    };
    // The demo user needs a token when auth is on; the browser logs in with it.
    let demo_token = if args.demo && args.auth {
        let (token, _) = crate::auth::tokens::create(&db, "demo", None)
            .await
            .map_err(|e| format!("cannot create the demo token: {e}"))?;
        Some(token)
    } else {
        None
    };
    let state = AppState::new(db, config)
        .await
        .map_err(|e| format!("cannot start: {e}"))?;
    // The provider is read now, so a wrong issuer shows at once; one that
    // is away does not stop the start (tokens still sign in), and is read
    // again at the first sign-in.
    let oidc_line = match &state.oidc {
        Some(oidc) => Some(match oidc.discover().await {
            Ok(()) => format!(
                "oidc: sign-in with {} (/api/v1/auth/oidc/start)",
                oidc.issuer()
            ),
            Err(why) => format!("oidc: {why}; tried again at the next sign-in"),
        }),
        None => None,
    };
    // Test harnesses and scripts wait for this line to learn the port (its
    // first word after "listening on"), so it goes to stdout (logs go to
    // stderr) and is flushed at once. Whether a token is needed is said on
    // it, where a person starting the server looks (issue 46 item 11).
    let mut stdout = std::io::stdout().lock();
    let auth = if args.auth { " (auth on)" } else { "" };
    writeln!(stdout, "listening on http://{addr}{auth}")
        .and_then(|()| {
            // Each channel's connection out, under it (issue 48 item 4);
            // every change after this is a log line.
            for line in state.statuses.lines() {
                writeln!(stdout, "  {line}")?;
            }
            if let Some(line) = &oidc_line {
                writeln!(stdout, "  {line}")?;
            }
            // Where the scraper reads, when on a port of its own.
            if let Some(at) = metrics_listener.as_ref().and_then(|l| l.local_addr().ok()) {
                writeln!(stdout, "  metrics: http://{at}/metrics")?;
            }
            stdout.flush()
        })
        .map_err(|e| format!("cannot write to stdout: {e}"))?;
    drop(stdout);
    if let Some(listener) = metrics_listener {
        tokio::spawn(crate::app::serve_metrics(listener, state.clone()));
    }
    // How to get a token is said beside the listening line (issue 29).
    if args.auth {
        tracing::info!(
            "auth on: every request needs a token; `clarify token create --user NAME` makes one"
        );
    }

    if let Some(webhook) = demo_webhook {
        if let Some(token) = &demo_token {
            tracing::info!("demo: log in at http://{addr}/login with {token}");
        }
        let patience = std::time::Duration::from_secs(args.demo_patience);
        tokio::spawn(demo::run(addr, demo_token, patience, webhook));
    }
    crate::app::serve(listener, state, shutdown_signal())
        .await
        .map_err(|e| format!("server failed: {e}"))
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

/// A flag's credential, kept where it never prints; an empty one is none.
fn secret(value: Option<&String>) -> Option<crate::ids::Secret> {
    value
        .filter(|v| !v.is_empty())
        .map(|v| crate::ids::Secret(v.clone()))
}
