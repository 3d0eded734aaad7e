//! What each channel's connection is doing, for the people who run the
//! server (issue 48 item 4): `/healthz`, the lines under the listening
//! line, a log line at every change, and the overlay's header.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::link::{Event, Link};

/// One channel's state and how it connects.
#[derive(Debug, Clone, Copy)]
struct Entry {
    link: Link,
    mode: &'static str,
}

/// Every channel's connection; cheap to clone, shared by the keepers.
#[derive(Debug, Clone, Default)]
pub struct Statuses(Arc<Mutex<BTreeMap<&'static str, Entry>>>);

impl Statuses {
    /// Registers `channel` ("slack"), connecting in `mode` ("socket
    /// mode"), and hands back its keeper.
    /// A keeper is made for a channel about to start: it reads
    /// "connecting" from the first line a person sees.
    #[must_use]
    pub fn keeper(&self, channel: &'static str, mode: &'static str) -> Keeper {
        self.set(channel, mode, Link::Connecting { failures: 0 });
        Keeper {
            channel,
            mode,
            statuses: self.clone(),
        }
    }

    fn link(&self, channel: &str) -> Link {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(channel)
            .map_or(Link::Off, |entry| entry.link)
    }

    fn set(&self, channel: &'static str, mode: &'static str, link: Link) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(channel, Entry { link, mode });
    }

    fn entries(&self) -> Vec<(&'static str, Entry)> {
        let entries = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        entries.iter().map(|(k, v)| (*k, *v)).collect()
    }

    /// Each channel and its connection's state.
    #[must_use]
    pub fn links(&self) -> Vec<(&'static str, Link)> {
        self.entries()
            .into_iter()
            .map(|(channel, entry)| (channel, entry.link))
            .collect()
    }

    /// A line per channel: "slack: connected (socket mode)".
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .map(|(channel, entry)| line(channel, entry))
            .collect()
    }

    /// A sentence per channel that is down, for the people answering:
    /// what does not reach them, and that the inbox still does.
    #[must_use]
    pub fn down(&self) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter(|(_, entry)| entry.link.is_down())
            .map(|(channel, _)| {
                format!("{} is not connected: its questions and answers wait until it is back; answer here meanwhile.", named(channel))
            })
            .collect()
    }

    /// `{"slack": {"state": "connected", "mode": "socket mode", "down": false}}`.
    #[must_use]
    pub fn to_json(&self) -> Value {
        let channels: serde_json::Map<String, Value> = self
            .entries()
            .into_iter()
            .map(|(channel, Entry { link, mode })| {
                let state = json!({"state": link.phrase(), "mode": mode, "down": link.is_down()});
                (channel.to_owned(), state)
            })
            .collect();
        Value::Object(channels)
    }
}

/// A channel's name as a sentence starts with it: "Telegram"; ntfy
/// writes itself in lower case.
fn named(channel: &str) -> String {
    let mut chars = channel.chars();
    match chars.next() {
        Some(first) if !channel.starts_with("ntfy") => first.to_uppercase().chain(chars).collect(),
        _ => channel.to_owned(),
    }
}

fn line(channel: &str, Entry { link, mode }: Entry) -> String {
    format!("{channel}: {} ({mode})", link.phrase())
}

/// One channel's connection as its loops drive it: clones share the state
/// (the lease's holder and the connection it runs report to one place).
#[derive(Debug, Clone)]
pub struct Keeper {
    channel: &'static str,
    mode: &'static str,
    statuses: Statuses,
}

impl Keeper {
    /// Applies `event` ([`Link::transition`]), publishes the new state and
    /// logs a change a person would want to know of.
    pub fn on(&self, event: Event) -> Link {
        let mut entries = self
            .statuses
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = entries.entry(self.channel).or_insert(Entry {
            link: Link::Off,
            mode: self.mode,
        });
        let (link, next) = (entry.link, entry.link.transition(event));
        entry.link = next;
        drop(entries);
        // A retry's wait and its try read alike: said once.
        if next.phrase() != link.phrase() {
            let said = line(
                self.channel,
                Entry {
                    link: next,
                    mode: self.mode,
                },
            );
            match next {
                Link::Up | Link::Standby => tracing::info!("{said}"),
                _ if next.is_down() => tracing::warn!("{said}"),
                _ => tracing::debug!("{said}"),
            }
        }
        next
    }

    /// The connection's state.
    #[must_use]
    pub fn link(&self) -> Link {
        self.statuses.link(self.channel)
    }

    /// Waits out the backoff of the current state: false at once when
    /// `shutdown` is cancelled (the caller stops), true when it is time for
    /// the next try.
    pub async fn pause(&self, shutdown: &tokio_util::sync::CancellationToken) -> bool {
        // Up to a fifth more, at random: replicas that lost the same peer
        // at once do not all come back in the same instant.
        let wait = self.link().delay().unwrap_or_default();
        let wait = wait.mul_f64(1.0 + rand::random::<f64>() / 5.0);
        tokio::select! {
            () = shutdown.cancelled() => false,
            () = tokio::time::sleep(wait) => !shutdown.is_cancelled(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_channel_says_its_state_and_mode() {
        let statuses = Statuses::default();
        let slack = statuses.keeper("slack", "socket mode");
        let _telegram = statuses.keeper("telegram", "polling");
        slack.on(Event::Start);
        slack.on(Event::Opened);
        assert_eq!(
            statuses.lines(),
            [
                "slack: connected (socket mode)",
                "telegram: connecting (polling)"
            ]
        );
        slack.on(Event::Dropped);
        slack.on(Event::Start);
        slack.on(Event::Failed);
        assert_eq!(statuses.to_json()["slack"]["down"], true);
        assert_eq!(statuses.down().len(), 1);
        assert!(statuses.down()[0].starts_with("Slack is not connected"));
    }
}
