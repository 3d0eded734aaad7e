//! The agent session a `clarify mcp` process asks on: made at its first
//! ask (when the client's name is known), on the project's task, and ended
//! when the process's conversation ends.

use std::time::Duration;

use clarify_core::{SessionState, api};
use serde_json::json;
use tokio::sync::Mutex;

use super::project::Project;
use crate::client::{Client, Reply, error_text};

/// What a tool error says when something between the agent and Clarify is
/// wrong: the cause and the fix, never a bare status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trouble(pub String);

impl Trouble {
    /// The server did not answer at all.
    pub fn unreachable(base: &str) -> Self {
        Self(format!(
            "Clarify is not reachable at {base}; start it with `clarify serve` \
             (or set CLARIFY_SERVER to its URL)."
        ))
    }

    /// An answer other than the one expected from `what`.
    pub fn from_reply(base: &str, what: &str, reply: &Reply, has_token: bool) -> Self {
        Self(match reply.0 {
            401 if has_token => format!(
                "Clarify at {base} refused CLARIFY_TOKEN (401): it is unknown, revoked or \
                 expired; make a new one with `clarify token create --user NAME`."
            ),
            401 => format!(
                "Clarify at {base} requires a token (it runs with --auth): set CLARIFY_TOKEN \
                 to your personal access token (`clarify token create --user NAME`)."
            ),
            403 => format!(
                "Clarify at {base} refused {what}: {} (CLARIFY_TOKEN must be a personal \
                 access token, clk_pat_…, not an agent token).",
                error_text(reply)
            ),
            404 if reply.1.is_null() => format!(
                "{base} is not a Clarify server ({what} answered 404); check CLARIFY_SERVER."
            ),
            _ => format!("Clarify refused {what}: {}", error_text(reply)),
        })
    }
}

/// The session, once made.
#[derive(Debug, Clone)]
pub struct Open {
    /// Its id.
    pub session_id: String,
    /// A client authenticated as the session's agent.
    pub agent: Client,
}

/// The process's one session on its project's task.
#[derive(Debug)]
pub struct AgentSession {
    user: Client,
    has_token: bool,
    project: Project,
    /// `--workspace`: where the project's task is made.
    workspace: Option<String>,
    open: Mutex<Option<Open>>,
}

impl AgentSession {
    /// Not made yet: [`AgentSession::open`] makes it.
    pub fn new(user: Client, has_token: bool, project: Project, workspace: Option<String>) -> Self {
        Self {
            user,
            has_token,
            project,
            workspace: workspace.filter(|w| !w.trim().is_empty()),
            open: Mutex::new(None),
        }
    }

    /// The server's URL.
    pub fn base(&self) -> &str {
        self.user.base()
    }

    /// The session, made on first use: the project's task (found again, or
    /// made), then a session on it naming `client` and the branch.
    ///
    /// # Errors
    /// What is wrong, and how to fix it.
    pub async fn open(&self, client: Option<&str>) -> Result<Open, Trouble> {
        let mut open = self.open.lock().await;
        if let Some(open) = &*open {
            return Ok(open.clone());
        }
        let base = self.base().to_owned();
        let new_task = api::NewTask {
            title: self.project.name.clone(),
            project: Some(self.project.name.clone()),
            workspace_id: self.workspace.clone(),
            ..api::NewTask::default()
        };
        let reply = self.call(self.user.post("/tasks", &new_task)).await?;
        if !matches!(reply.0, 200 | 201) {
            return Err(Trouble::from_reply(
                &base,
                "POST /api/v1/tasks",
                &reply,
                self.has_token,
            ));
        }
        let task: api::TaskView = serde_json::from_value(reply.1).map_err(|_| {
            Trouble(format!(
                "{base} answered POST /api/v1/tasks unexpectedly; check CLARIFY_SERVER."
            ))
        })?;
        let new_session = api::NewSession {
            resume: None,
            description: Some(self.describe(client)),
        };
        let path = format!("/tasks/{}/sessions", task.task.id);
        let reply = self.call(self.user.post(&path, &new_session)).await?;
        if reply.0 != 201 {
            return Err(Trouble::from_reply(
                &base,
                "a new session",
                &reply,
                self.has_token,
            ));
        }
        let created: api::CreatedSession = serde_json::from_value(reply.1)
            .map_err(|_| Trouble(format!("{base} answered a new session unexpectedly")))?;
        tracing::info!(
            task = %task.task.id,
            session = %created.session.id,
            project = %self.project.name,
            "asking on a new session"
        );
        let made = Open {
            session_id: created.session.id,
            agent: Client::new(&base, Some(created.agent_token)),
        };
        *open = Some(made.clone());
        Ok(made)
    }

    /// Ends the session (the conversation is over): its open questions
    /// expire, leaving everyone's inbox, instead of waiting for an agent
    /// that is gone.
    pub async fn end(&self) {
        let Some(open) = self.open.lock().await.take() else {
            return;
        };
        let patch = json!({"state": SessionState::Completed.as_str()});
        let path = format!("/sessions/{}", open.session_id);
        let ended = tokio::time::timeout(
            END_WITHIN,
            self.user.send(reqwest::Method::PATCH, &path, Some(&patch)),
        )
        .await;
        match ended {
            Ok(Ok((200, _))) => tracing::info!(session = %open.session_id, "session ended"),
            Ok(Ok(reply)) => tracing::warn!(
                session = %open.session_id,
                "could not end the session: {}",
                error_text(&reply)
            ),
            Ok(Err(_)) | Err(_) => tracing::warn!(
                session = %open.session_id,
                "could not end the session: {} is not reachable",
                self.base()
            ),
        }
    }

    /// "Claude Code on branch main (project clarify)".
    fn describe(&self, client: Option<&str>) -> String {
        // A client's name is its own say: keep it short wherever it is shown.
        let client: String = client
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .unwrap_or("An MCP client")
            .chars()
            .take(128)
            .collect();
        match &self.project.branch {
            Some(branch) => format!(
                "{client} on branch {branch} (project {})",
                self.project.name
            ),
            None => format!("{client} (project {})", self.project.name),
        }
    }

    async fn call(
        &self,
        request: impl Future<Output = Result<Reply, String>>,
    ) -> Result<Reply, Trouble> {
        request.await.map_err(|_| Trouble::unreachable(self.base()))
    }
}

/// How long ending the session may take when the process is leaving.
const END_WITHIN: Duration = Duration::from_secs(3);
