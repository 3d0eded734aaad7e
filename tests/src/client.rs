//! [`Api`]: the REST API as one caller, with or without a token.

use clarify_core::api;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::server::TestServer;

/// The REST API as one caller (with a bearer token or none). Every method
/// panics when the request fails at the HTTP level.
#[derive(Debug, Clone)]
pub struct Api<'a> {
    server: &'a TestServer,
    token: Option<String>,
}

impl<'a> Api<'a> {
    /// The API of `server` as the holder of `token` (none: unauthenticated).
    pub(crate) fn new(server: &'a TestServer, token: Option<String>) -> Self {
        Self { server, token }
    }
}

impl Api<'_> {
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let url = self.server.url(&format!("/api/v1{path}"));
        let mut request = self.server.client().request(method, url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        parse(request.send().await.expect("request")).await
    }

    /// POSTs JSON; returns status and parsed body.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    /// PATCHes JSON; returns status and parsed body.
    pub async fn patch(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    /// PUTs JSON; returns status and parsed body.
    pub async fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, path, Some(body)).await
    }

    /// GETs; returns status and parsed body.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    /// Answers or rejects `pending_id`.
    pub async fn respond(&self, pending_id: &str, body: &Value) -> (u16, Value) {
        self.post(&format!("/clarification/{pending_id}/respond"), body)
            .await
    }

    /// Sends `body` and reads the answer as the API's type `T`, asserting
    /// the status is `expected`.
    ///
    /// # Panics
    /// Another status, or a body that is not a `T`.
    pub async fn typed<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &impl Serialize,
        expected: &[u16],
    ) -> T {
        let body = serde_json::to_value(body).expect("a JSON body");
        let (status, reply) = self.send(method, path, Some(&body)).await;
        assert!(expected.contains(&status), "{path}: {status} {reply}");
        serde_json::from_value(reply.clone())
            .unwrap_or_else(|e| panic!("{path}: not the API's type ({e}): {reply}"))
    }

    /// Creates a task.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn create_task(&self, task: &api::NewTask) -> api::TaskView {
        self.typed(reqwest::Method::POST, "/tasks", task, &[201])
            .await
    }

    /// Creates a session on `task_id`.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn create_session(
        &self,
        task_id: &str,
        session: &api::NewSession,
    ) -> api::CreatedSession {
        let path = format!("/tasks/{task_id}/sessions");
        self.typed(reqwest::Method::POST, &path, session, &[201])
            .await
    }

    /// One bundle as its readers see it.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn bundle(&self, pending_id: &str) -> api::BundleView {
        let path = format!("/clarification/{pending_id}");
        let (status, reply) = self.get(&path).await;
        assert_eq!(status, 200, "{path}: {reply}");
        serde_json::from_value(reply).expect("a bundle view")
    }

    /// Creates a task (in `workspace_id`, if any) and a session on it (with
    /// `resume` as its resume target, if any); returns (task id, session id,
    /// agent token).
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn session_in(
        &self,
        workspace_id: &str,
        resume: Option<Value>,
    ) -> (String, String, String) {
        let task = self
            .create_task(&api::NewTask {
                title: "a task".into(),
                workspace_id: Some(workspace_id.to_owned()),
                description: None,
                project: None,
            })
            .await;
        let resume = resume.map(|r| serde_json::from_value(r).expect("a resume target"));
        let session = self
            .create_session(
                &task.task.id,
                &api::NewSession {
                    resume,
                    description: None,
                },
            )
            .await;
        (task.task.id, session.session.id, session.agent_token)
    }

    /// [`Api::session_in`] with no workspace.
    pub async fn session(&self, resume: Option<Value>) -> (String, String, String) {
        self.session_in("", resume).await
    }

    /// Asks `questions` on `session_id` (this caller must hold its agent
    /// token); returns the pending id.
    ///
    /// # Panics
    /// When the API refuses.
    pub async fn ask(&self, session_id: &str, questions: Value) -> String {
        let ask = api::Ask {
            session_id: session_id.to_owned(),
            bundle: serde_json::from_value(json!({ "questions": questions })).expect("questions"),
            ..api::Ask::default()
        };
        let asked: api::Asked = self
            .typed(
                reqwest::Method::POST,
                "/clarification/request",
                &ask,
                &[200, 201],
            )
            .await;
        asked.pending_id
    }
}

async fn parse(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}
