//! The REST client: every call sends credentials (W1) and maps the R10
//! outcomes of a submit onto what the overlay must do next.

use clarify_core::{Question, Response, Status, Submission};
use gloo_net::http::{Request, RequestBuilder};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use web_sys::RequestCredentials;

const BASE: &str = "/api/v1";

/// A failed call, already phrased for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 401: the caller must log in.
    Unauthorized,
    /// 404 (or 405 for a route this server lacks).
    NotFound,
    /// Anything else, with a message to show.
    Other(String),
}

impl ApiError {
    /// The sentence shown to the user.
    pub fn message(&self) -> String {
        match self {
            Self::Unauthorized => "You are not logged in.".into(),
            Self::NotFound => "Not found.".into(),
            Self::Other(m) => m.clone(),
        }
    }
}

/// A task with its pending actions (T1/T2).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Task {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub workspace_id: String,
    #[serde(default)]
    pub task_pending_action: Option<String>,
}

/// A workspace.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Workspace {
    pub id: String,
    pub name: String,
}

/// A session as listed for a task.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Session {
    pub id: String,
}

/// One transcript row; `metadata` is kept raw and read with
/// `clarify_core::ClarificationMetadata` so the browser reads it exactly as
/// the server does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub metadata: Value,
    #[serde(default)]
    pub created_at: String,
}

/// A bundle as `GET /clarification/{id}` reports it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Bundle {
    pub pending_id: String,
    #[serde(default)]
    pub context: String,
    pub questions: Vec<Question>,
    #[serde(default)]
    pub active: bool,
    #[serde(default)]
    pub agent_disconnected: bool,
}

/// `GET /auth/me`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Me {
    pub auth_enabled: bool,
    #[serde(default)]
    pub user: Option<Value>,
}

/// What a submit ended in (R10 as W2/W3 read it).
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitOutcome {
    /// 200 and ours won; the server's normalized record of it.
    Claimed(Status, Response),
    /// 200 `claimed: false`: someone else won; their answer is the truth.
    Lost(Status, Response),
    /// 409: no longer active and nobody to report as the winner.
    Inactive,
}

fn with_credentials(builder: RequestBuilder) -> RequestBuilder {
    // W1: the cookie must travel even when the API is on another origin.
    builder.credentials(RequestCredentials::Include)
}

async fn error_of(response: gloo_net::http::Response) -> ApiError {
    match response.status() {
        401 => ApiError::Unauthorized,
        404 | 405 => ApiError::NotFound,
        status => {
            let body: Option<Value> = response.json().await.ok();
            let detail = body
                .as_ref()
                .and_then(|b| b.get("error"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            ApiError::Other(detail.unwrap_or_else(|| format!("The server answered {status}.")))
        }
    }
}

fn network(e: &gloo_net::Error) -> ApiError {
    ApiError::Other(format!("Cannot reach the server ({e})."))
}

async fn get<T: DeserializeOwned>(path: &str) -> Result<T, ApiError> {
    let response = with_credentials(Request::get(&format!("{BASE}{path}")))
        .send()
        .await
        .map_err(|e| network(&e))?;
    if !response.ok() {
        let error = error_of(response).await;
        // An expired or revoked cookie: the login page is the way back.
        if error == ApiError::Unauthorized && path != "/auth/me" {
            let location = leptos::prelude::window().location();
            if location.pathname().ok().as_deref() != Some("/login") {
                let _ = location.set_href("/login");
            }
        }
        return Err(error);
    }
    response
        .json()
        .await
        .map_err(|e| ApiError::Other(format!("Unexpected answer from the server ({e}).")))
}

async fn post(path: &str, body: &Value) -> Result<gloo_net::http::Response, ApiError> {
    with_credentials(Request::post(&format!("{BASE}{path}")))
        .json(body)
        .map_err(|e| ApiError::Other(e.to_string()))?
        .send()
        .await
        .map_err(|e| network(&e))
}

#[derive(Deserialize)]
struct Tasks {
    tasks: Vec<Task>,
}
#[derive(Deserialize)]
struct Workspaces {
    workspaces: Vec<Workspace>,
}
#[derive(Deserialize)]
struct Sessions {
    sessions: Vec<Session>,
}
#[derive(Deserialize)]
struct Messages {
    messages: Vec<Message>,
}

/// Every task the caller can see.
pub async fn tasks() -> Result<Vec<Task>, ApiError> {
    Ok(get::<Tasks>("/tasks").await?.tasks)
}

/// Every workspace the caller can see.
pub async fn workspaces() -> Result<Vec<Workspace>, ApiError> {
    Ok(get::<Workspaces>("/workspaces").await?.workspaces)
}

/// One task.
pub async fn task(id: &str) -> Result<Task, ApiError> {
    get(&format!("/tasks/{id}")).await
}

/// The task's sessions, primary first.
pub async fn sessions(task_id: &str) -> Result<Vec<Session>, ApiError> {
    Ok(get::<Sessions>(&format!("/tasks/{task_id}/sessions"))
        .await?
        .sessions)
}

/// A session's transcript.
pub async fn messages(session_id: &str) -> Result<Vec<Message>, ApiError> {
    Ok(get::<Messages>(&format!("/sessions/{session_id}/messages"))
        .await?
        .messages)
}

/// One bundle, with the server's verdict on whether it is active.
pub async fn bundle(pending_id: &str) -> Result<Bundle, ApiError> {
    get(&format!("/clarification/{pending_id}")).await
}

/// The caller's identity and whether auth is on.
pub async fn me() -> Result<Me, ApiError> {
    get("/auth/me").await
}

/// Logs in with a token; the server sets the cookie.
pub async fn login(token: &str) -> Result<(), ApiError> {
    let response = post("/auth/login", &json!({ "token": token })).await?;
    if response.ok() {
        Ok(())
    } else {
        Err(match error_of(response).await {
            ApiError::Unauthorized => ApiError::Other("That token was not accepted.".into()),
            other => other,
        })
    }
}

/// Logs out.
pub async fn logout() -> Result<(), ApiError> {
    post("/auth/logout", &json!({})).await.map(drop)
}

#[derive(Deserialize)]
struct RespondBody {
    #[serde(default)]
    claimed: Option<bool>,
    status: Status,
    response: Response,
}

/// Submits answers or a rejection and reads the body, because on a lost race
/// only the body says what the transcript must show (W3).
pub async fn respond(pending_id: &str, submission: &Submission) -> Result<SubmitOutcome, ApiError> {
    let body = if submission.rejected {
        json!({ "rejected": true, "reject_reason": submission.reject_reason })
    } else {
        let answers: Vec<Value> = submission
            .answers
            .iter()
            .map(|a| {
                json!({
                    "question_id": a.question_id,
                    "selected_options": a.selected_options,
                    "custom_text": a.custom_text,
                })
            })
            .collect();
        json!({ "answers": answers })
    };
    let response = post(&format!("/clarification/{pending_id}/respond"), &body).await?;
    match response.status() {
        200 => {
            let body: RespondBody = response.json().await.map_err(|e| {
                ApiError::Other(format!("Unexpected answer from the server ({e})."))
            })?;
            // An older server omits `claimed`: treat it as ours (W3).
            if body.claimed == Some(false) {
                Ok(SubmitOutcome::Lost(body.status, body.response))
            } else {
                Ok(SubmitOutcome::Claimed(body.status, body.response))
            }
        }
        409 => Ok(SubmitOutcome::Inactive),
        _ => Err(error_of(response).await),
    }
}
