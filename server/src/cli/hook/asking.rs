//! Asking through the running server for a hook: the conversation's one
//! Clarify session (found in the hook's record, else made as `clarify
//! mcp` makes its own), the ask, and the wait, bounded by the time the
//! hook may hold the agent before it shows its own dialog.

use std::path::Path;
use std::time::Duration;

use clarify_core::{NewBundle, RespondBody, api};
use serde_json::json;
use tokio::time::Instant;

use super::state::{Held, Record};
use super::{Hold, Hook, Quiet};
use crate::cli::mcp::project::Project;
use crate::cli::mcp::session::{AgentSession, Open, Trouble};
use crate::client::Client;

/// How a wait ended.
#[derive(Debug)]
pub enum Waited {
    /// Answered, declined or expired: the server's answer.
    Settled(RespondBody),
    /// No answer within the time: the agent shows its own dialog.
    NotYet,
    /// The agent stopped the hook.
    Killed,
    /// The bundle closed without an answer (cancelled, its session
    /// ended), or the server refused the wait: why.
    Closed(String),
}

/// Backoff between polls of a server that does not answer.
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MOST: Duration = Duration::from_secs(5);

impl Hook {
    /// The conversation's Clarify session: the record's, else a new one
    /// (recorded). `stale` names a session the server no longer takes.
    pub(super) async fn session(
        &self,
        agent_session: &str,
        cwd: &str,
        stale: Option<&str>,
    ) -> Result<Open, Quiet> {
        let held = self.held(agent_session)?;
        let mut record = held.read();
        if !record.session_id.is_empty() && stale != Some(record.session_id.as_str()) {
            return Ok(Open {
                agent: Client::new(&self.server, Some(record.agent_token.clone())),
                session_id: record.session_id,
            });
        }
        let dir = if cwd.trim().is_empty() {
            std::env::current_dir().unwrap_or_default()
        } else {
            Path::new(cwd).to_path_buf()
        };
        let made = AgentSession::new(
            self.user(),
            self.token.is_some(),
            Project::around(&dir),
            self.workspace.clone(),
        );
        let open = made
            .open(Some(self.agent.name()))
            .await
            .map_err(|Trouble(why)| Quiet(why))?;
        record = Record {
            session_id: open.session_id.clone(),
            agent_token: open.agent.token().unwrap_or_default().to_owned(),
            asked: record.asked,
        };
        held.write(&record).map_err(Quiet)?;
        Ok(open)
    }

    /// The record of `agent_session`, locked.
    pub(super) fn held(&self, agent_session: &str) -> Result<Held, Quiet> {
        Held::lock(&self.state_dir, &self.server, agent_session).map_err(Quiet)
    }

    /// A client of the server as the person (`CLARIFY_TOKEN`).
    pub(super) fn user(&self) -> Client {
        Client::new(&self.server, self.token.clone())
    }

    /// The bundle an earlier hook of the same tool call asked (under one
    /// of `keys`), on the conversation's recorded session.
    pub(super) fn asked(&self, agent_session: &str, keys: &[String]) -> Option<(Open, String)> {
        let record = self.held(agent_session).ok()?.read();
        let pending_id = keys.iter().find_map(|k| record.asked.get(k))?.clone();
        if record.session_id.is_empty() {
            return None;
        }
        let open = Open {
            agent: Client::new(&self.server, Some(record.agent_token)),
            session_id: record.session_id,
        };
        Some((open, pending_id))
    }

    /// Asks `bundle` on the conversation's session, made again once if the
    /// server no longer knows the recorded one; records it under `keys`.
    /// Returns the session and the bundle's id.
    pub(super) async fn ask(
        &self,
        agent_session: &str,
        cwd: &str,
        keys: &[String],
        bundle: NewBundle,
    ) -> Result<(Open, String), Quiet> {
        clarify_core::validate_new_bundle(&bundle).map_err(|e| Quiet(e.to_string()))?;
        let ask = api::Ask {
            bundle,
            attach: true,
            ..api::Ask::default()
        };
        let mut stale = None;
        loop {
            let open = self.session(agent_session, cwd, stale.as_deref()).await?;
            let reply = open
                .agent
                .post("/clarification/request", &ask)
                .await
                .map_err(|_| Quiet(Trouble::unreachable(&self.server).0))?;
            match reply.0 {
                200 | 201 => {
                    let asked: api::Asked = serde_json::from_value(reply.1)
                        .map_err(|_| Quiet("the server answered the ask unexpectedly".into()))?;
                    if !keys.is_empty() {
                        let held = self.held(agent_session)?;
                        let mut record = held.read();
                        for key in keys {
                            record.asked.insert(key.clone(), asked.pending_id.clone());
                        }
                        held.write(&record).map_err(Quiet)?;
                    }
                    return Ok((open, asked.pending_id));
                }
                // The recorded session ended, or the server's database is
                // another: a new session, once.
                401 | 404 | 409 if stale.is_none() => stale = Some(open.session_id),
                _ => {
                    let why = Trouble::from_reply(&self.server, "the question", &reply, true);
                    return Err(Quiet(why.0));
                }
            }
        }
    }

    /// Waits for `pending_id`'s answer as `hold` says; past its time the
    /// bundle is detached (an answer given later is kept, not handed to a
    /// poll nobody reads). A server that does not answer is polled again
    /// with backoff while there is time.
    pub(super) async fn wait(&self, open: &Open, pending_id: &str, hold: Hold) -> Waited {
        let mut retry = RETRY_FIRST;
        loop {
            let left = match hold {
                Hold::Until(deadline) => deadline.saturating_duration_since(Instant::now()),
                Hold::Racing => Duration::from_secs(60),
            };
            if left.is_zero() {
                detach(open, pending_id).await;
                return Waited::NotYet;
            }
            let seconds = left.as_secs().clamp(1, 60);
            let path = format!("/clarification/{pending_id}/wait?timeout={seconds}");
            let reply = tokio::time::timeout(left + SLACK, open.agent.get(&path)).await;
            match reply {
                Ok(Ok((200, body))) => match serde_json::from_value(body) {
                    Ok(body) => return Waited::Settled(body),
                    Err(_) => {
                        return Waited::Closed("the server's answer could not be read".into());
                    }
                },
                Ok(Ok((504, _))) | Err(_) => retry = RETRY_FIRST,
                Ok(Ok((status, _))) if status >= 500 => backoff(&mut retry, left).await,
                Ok(Err(_)) => backoff(&mut retry, left).await,
                Ok(Ok(reply)) => {
                    return Waited::Closed(format!(
                        "the question closed without an answer: {}",
                        crate::client::error_text(&reply)
                    ));
                }
            }
        }
    }
}

/// What a poll may take past the time it asked to block.
const SLACK: Duration = Duration::from_secs(5);

/// Sleeps `retry` (at most `left`) and doubles it.
async fn backoff(retry: &mut Duration, left: Duration) {
    tokio::time::sleep((*retry).min(left)).await;
    *retry = (*retry * 2).min(RETRY_MOST);
}

impl Hook {
    /// Drops `keys` from the conversation's record.
    pub(super) fn forget(&self, agent_session: &str, keys: &[String]) {
        if keys.is_empty() {
            return;
        }
        if let Ok(held) = self.held(agent_session) {
            let mut record = held.read();
            let before = record.asked.len();
            record.asked.retain(|key, _| !keys.contains(key));
            if record.asked.len() != before {
                let _ = held.write(&record);
            }
        }
    }

    /// Cancels `pending_id`: it leaves every inbox.
    pub(super) async fn withdraw(&self, open: &Open, pending_id: &str) {
        let path = format!("/clarification/{pending_id}/cancel");
        let _ =
            tokio::time::timeout(Duration::from_secs(3), open.agent.post(&path, &json!({}))).await;
    }
}

/// Stops waiting on the server's side, so that an answer given later is
/// kept rather than counted as handed to a poll nobody reads.
async fn detach(open: &Open, pending_id: &str) {
    let path = format!("/clarification/{pending_id}/detach");
    let _ = tokio::time::timeout(Duration::from_secs(3), open.agent.post(&path, &json!({}))).await;
}
