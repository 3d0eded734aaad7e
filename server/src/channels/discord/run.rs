//! Keeping the gateway connected: one session per bot, connected again
//! at once (resuming) after a drop, after a backoff when a try failed,
//! never again when Discord refused the bot for good.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::gateway::{Ended, Gateway, Progress, Session};
use super::press::Presses;
use crate::channels::Channels;
use crate::lifecycle::Resolving;

/// The first backoff after a failed try; doubled up to a minute.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// Starts `channels`' Discord gateway, if a bot is configured, answering
/// presses through `resolving`, until `shutdown`.
pub fn start(channels: &Channels, resolving: &Resolving, shutdown: &CancellationToken) {
    let Some((bot, webhooks)) = channels.discord() else {
        return;
    };
    let presses = Presses::new(resolving.clone(), webhooks.clone(), bot.clone());
    let gateway = Gateway::new(bot.clone(), webhooks.clone(), presses);
    tokio::spawn(run(gateway, shutdown.clone()));
}

/// The session as this process keeps it.
struct Kept;

impl Progress for Kept {
    fn up(&mut self) {
        tracing::info!("discord: connected");
    }

    async fn keep(&mut self, _: &Session) -> bool {
        true
    }
}

async fn run(gateway: Gateway, shutdown: CancellationToken) {
    let mut session = None;
    let mut failures = 0u32;
    loop {
        match gateway.connect(&mut session, &mut Kept, &shutdown).await {
            Ended::Stopped => return,
            Ended::Fatal(why) => {
                tracing::error!(why, "discord: the gateway refused the bot; not retried");
                return;
            }
            Ended::Dropped(why) => {
                tracing::info!(why, "discord: dropped; resuming");
                failures = 0;
            }
            Ended::Failed(why) => {
                failures = failures.saturating_add(1);
                let delay =
                    (FIRST_BACKOFF * 2u32.pow(failures.min(7) - 1)).min(Duration::from_secs(60));
                tracing::warn!(why, failures, "discord: the gateway failed; retrying");
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(delay) => {}
                }
            }
        }
    }
}
