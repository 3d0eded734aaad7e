//! Slack's Socket Mode (issue 48 item 1): with an app-level token Clarify
//! opens the WebSocket itself, so presses reach a server nobody can reach
//! from outside. Every replica keeps a connection of its own (Slack spreads
//! envelopes over up to ten, and the one claim answers each press once).
//!
//! Each envelope is acknowledged with its `envelope_id` after its press
//! went through the claim: an envelope never acknowledged (its claim
//! failed, its socket dropped first) is delivered again by Slack, and a
//! press answered already is remembered ([`mod@super::press`]), so a press is
//! neither lost nor answered twice. A claim still running after
//! [`ACK_WITHIN`] is acknowledged anyway and carries on (see DESIGN.md,
//! "Slack Socket Mode"). On `disconnect` (`warning`, `refresh_requested`)
//! the next connection is opened and greeted before the old one is
//! closed; a dropped socket, or one silent through two pings, is opened
//! again after the keeper's backoff.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

use super::super::Channels;
use super::super::keeper::{Event, Keeper};
use super::connect::{Opener, Socket};
use super::frames::{self, Frame, Reason};
use super::press::Presses;
use crate::ids::Secret;
use crate::lifecycle::Lifecycle;
use crate::resume::Webhooks;

/// How long a press's claim may run before its envelope is acknowledged
/// regardless: within Slack's three seconds, with room for the way back.
pub const ACK_WITHIN: Duration = Duration::from_secs(2);

/// How long a new connection may take to say `hello`.
const HELLO_WITHIN: Duration = Duration::from_secs(10);

/// How often Clarify pings; silent for two of these, the socket is dead.
const PING_EVERY: Duration = Duration::from_secs(15);

/// How long closing a socket may take (Slack may not finish the close
/// handshake: the connection is dropped after this).
const CLOSE_WITHIN: Duration = Duration::from_secs(1);

/// Checks `--slack-app-token`: it needs the bot's token (messages are
/// posted as the bot: `slack` is whether the app is configured), and must
/// be an app-level token.
///
/// # Errors
/// What is wrong, naming the flag.
pub fn check(app_token: Option<&Secret>, slack: bool) -> Result<(), String> {
    match app_token {
        Some(_) if !slack => Err(
            "--slack-bot-token: needed with --slack-app-token (messages are posted as the bot)"
                .to_owned(),
        ),
        Some(token) if !token.0.starts_with("xapp-") => Err(
            "--slack-app-token: must be an app-level token (xapp-…) with connections:write"
                .to_owned(),
        ),
        _ => Ok(()),
    }
}

/// Starts this replica's Socket Mode connection with `app_token`, for the
/// Slack app `channels` posts as, answering presses through `lifecycle`'s
/// claim, its state told through `keeper`, until `shutdown`. Every replica
/// connects: Slack spreads envelopes over up to ten connections, and the
/// claim answers each press once.
pub fn start(
    app_token: &Secret,
    channels: &Channels,
    lifecycle: &Lifecycle,
    keeper: Keeper,
    shutdown: &CancellationToken,
) {
    let Some(app) = &channels.slack else {
        return;
    };
    let presses = Presses::new(
        lifecycle.resolving.clone(),
        lifecycle.db().clone(),
        channels.clone(),
    );
    let socket = SocketMode::new(
        app_token.clone(),
        app.api_url.clone(),
        channels.webhooks.clone(),
        presses,
        keeper,
    );
    tokio::spawn(socket.run(shutdown.clone()));
}

/// How a connection ended.
enum Ended {
    /// At shutdown.
    Shutdown,
    /// Refreshed: the next connection, open and greeted.
    Replaced(Box<Socket>),
    /// Dropped, or closed by Slack without a refresh.
    Dropped(String),
}

/// A connection being opened while the current one still serves.
type Opening<'a> = Pin<Box<dyn Future<Output = Result<Socket, String>> + Send + 'a>>;

/// One replica's Socket Mode connection.
#[derive(Debug)]
pub struct SocketMode {
    opener: Opener,
    presses: Presses,
    keeper: Keeper,
}

impl SocketMode {
    /// Connections opened with `app_token` at `api_url` (Slack's Web API)
    /// through `webhooks`' client and network policy, presses answered by
    /// `presses`, their state told through `keeper`.
    #[must_use]
    pub fn new(
        app_token: Secret,
        api_url: String,
        webhooks: Webhooks,
        presses: Presses,
        keeper: Keeper,
    ) -> Self {
        Self {
            opener: Opener {
                app_token,
                api_url,
                webhooks,
            },
            presses,
            keeper,
        }
    }

    /// Keeps a connection open until `shutdown`, which closes it at once.
    pub async fn run(self, shutdown: CancellationToken) {
        // Acknowledgements outlive the socket their envelope came on: one
        // that comes after a refresh goes out on the next connection.
        let (acks, mut acked) = mpsc::unbounded_channel::<String>();
        self.keeper.on(Event::Start);
        let mut ready = None;
        loop {
            let socket = match ready.take() {
                Some(socket) => socket,
                None => {
                    let opened = tokio::select! {
                        () = shutdown.cancelled() => break,
                        opened = self.greeted() => opened,
                    };
                    match opened {
                        Ok(socket) => socket,
                        Err(why) => {
                            tracing::warn!(why, "slack: socket mode could not connect");
                            self.keeper.on(Event::Failed);
                            if !self.keeper.pause(&shutdown).await {
                                break;
                            }
                            self.keeper.on(Event::Start);
                            continue;
                        }
                    }
                }
            };
            self.keeper.on(Event::Opened);
            match self.serve(socket, &acks, &mut acked, &shutdown).await {
                Ended::Shutdown => break,
                Ended::Replaced(next) => ready = Some(*next),
                Ended::Dropped(why) => {
                    tracing::info!(why, "slack: socket mode connection dropped");
                    self.keeper.on(Event::Dropped);
                    if !self.keeper.pause(&shutdown).await {
                        break;
                    }
                    self.keeper.on(Event::Start);
                }
            }
        }
        self.keeper.on(Event::Stop);
    }

    /// A new connection once Slack said `hello` on it.
    async fn greeted(&self) -> Result<Socket, String> {
        let mut socket = self.opener.open().await?;
        let hello = async {
            loop {
                match socket.next().await {
                    Some(Ok(Message::Text(text))) if Frame::read(&text) == Frame::Hello => {
                        return Ok(());
                    }
                    // Nothing is taken before `hello`: Slack sends it first,
                    // and anything else unacknowledged comes again.
                    Some(Ok(_)) => {}
                    Some(Err(error)) => return Err(format!("before hello: {error}")),
                    None => return Err("closed before hello".to_owned()),
                }
            }
        };
        tokio::time::timeout(HELLO_WITHIN, hello)
            .await
            .map_err(|_| "no hello in time".to_owned())??;
        Ok(socket)
    }

    /// Serves `socket` until it ends.
    async fn serve(
        &self,
        socket: Socket,
        acks: &mpsc::UnboundedSender<String>,
        acked: &mut mpsc::UnboundedReceiver<String>,
        shutdown: &CancellationToken,
    ) -> Ended {
        let (mut sink, mut stream) = socket.split();
        let mut next: Option<Opening<'_>> = None;
        let mut pings =
            tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
        let mut heard = Instant::now();
        let why = loop {
            tokio::select! {
                () = shutdown.cancelled() => {
                    close(&mut sink).await;
                    return Ended::Shutdown;
                }
                Some(ack) = acked.recv() => {
                    if let Err(error) = sink.send(Message::text(ack)).await {
                        break format!("acknowledging: {error}");
                    }
                }
                opened = async { next.as_mut().expect("guarded by the condition").await },
                    if next.is_some() => {
                    next = None;
                    match opened {
                        Ok(socket) => {
                            close(&mut sink).await;
                            return Ended::Replaced(Box::new(socket));
                        }
                        // This one serves until it drops; then the keeper's
                        // backoff.
                        Err(why) => tracing::warn!(why, "slack: the next connection failed"),
                    }
                }
                _ = pings.tick() => {
                    if heard.elapsed() > 2 * PING_EVERY {
                        break "no answer to two pings".to_owned();
                    }
                    if let Err(error) = sink.send(Message::Ping(Vec::new().into())).await {
                        break format!("pinging: {error}");
                    }
                }
                frame = stream.next() => {
                    heard = Instant::now();
                    let text = match frame {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | None => {
                            break "closed by Slack".to_owned();
                        }
                        Some(Err(error)) => break error.to_string(),
                        // Pings are answered by tungstenite itself.
                        Some(Ok(_)) => continue,
                    };
                    match Frame::read(&text) {
                        Frame::Envelope { id, kind, payload } => {
                            self.take(id, &kind, payload, acks.clone());
                        }
                        Frame::Disconnect(Reason::Refresh) => {
                            if next.is_none() {
                                next = Some(Box::pin(self.greeted()));
                            }
                        }
                        Frame::Disconnect(Reason::Other) => {
                            close(&mut sink).await;
                            break "disconnected by Slack".to_owned();
                        }
                        Frame::Hello | Frame::Other => {}
                    }
                }
            }
        };
        // Slack may close the old connection before the next one is taken
        // over: the next one, greeted already or nearly, is not thrown away
        // (what was delivered on it would come again).
        let Some(opening) = next else {
            return Ended::Dropped(why);
        };
        tokio::select! {
            () = shutdown.cancelled() => Ended::Shutdown,
            opened = opening => match opened {
                Ok(socket) => Ended::Replaced(Box::new(socket)),
                Err(failed) => Ended::Dropped(format!("{why}; the next connection: {failed}")),
            },
        }
    }

    /// Answers envelope `id` in the background, then acknowledges it
    /// through `acks`; only a press ever waits for anything.
    fn take(&self, id: String, kind: &str, payload: Value, acks: mpsc::UnboundedSender<String>) {
        let presses = (kind == "interactive").then(|| self.presses.clone());
        tokio::spawn(async move {
            if let Some(presses) = presses {
                // Its own task: running past the bound does not cancel it
                // half-way through the claim.
                let claim = tokio::spawn(async move { presses.answer(&payload).await });
                match tokio::time::timeout(ACK_WITHIN, claim).await {
                    Ok(Ok(Ok(()))) => {}
                    Ok(Ok(Err(error))) => {
                        tracing::warn!(%error, "slack: a press failed; Slack delivers it again");
                        return;
                    }
                    Ok(Err(_)) => return,
                    Err(_) => tracing::warn!(
                        "slack: a press's claim is slow; acknowledged, the claim carries on"
                    ),
                }
            }
            let _ = acks.send(frames::ack(&id));
        });
    }
}

/// Closes a socket, not waiting long for Slack's side of it.
async fn close(sink: &mut futures_util::stream::SplitSink<Socket, Message>) {
    let _ = tokio::time::timeout(CLOSE_WITHIN, sink.send(Message::Close(None))).await;
}
