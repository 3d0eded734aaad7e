//! The REST client: every call sends credentials (W1) and maps the R10
//! outcomes of a submit onto what the overlay must do next. Every body is
//! one of `clarify_core::api`'s types, the server's own.

use clarify_core::{PendingPage, RespondBody, Submission, api};

pub use crate::outcome::{Closed, SubmitOutcome};
use gloo_net::http::{Request, RequestBuilder};
use serde::de::DeserializeOwned;
use serde_json::Value;
use web_sys::RequestCredentials;

const BASE: &str = "/api/v1";

/// A failed call, already phrased for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 401: the caller must log in.
    Unauthorized,
    /// 404 (or 405 for a route this server lacks).
    NotFound,
    /// The request never reached the server (it is down, or the network is).
    Offline,
    /// Anything else, with a message to show.
    Other(String),
}

impl ApiError {
    /// The sentence shown to the user.
    pub fn message(&self) -> String {
        match self {
            Self::Unauthorized => "You are not logged in.".into(),
            Self::NotFound => "Not found.".into(),
            // Plain words: the browser's `TypeError: Failed to fetch` tells
            // a person nothing (issue 29).
            Self::Offline => "The server cannot be reached right now.".into(),
            Self::Other(m) => m.clone(),
        }
    }
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
            let text = response.text().await.unwrap_or_default();
            let body: Option<Value> = crate::json::parse(&text).ok();
            let detail = body
                .as_ref()
                .and_then(|b| b.get("error"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            ApiError::Other(detail.unwrap_or_else(|| format!("The server answered {status}.")))
        }
    }
}

/// A request that got no HTTP answer at all: the banner goes up.
fn network(_: gloo_net::Error) -> ApiError {
    crate::connection::lose();
    ApiError::Offline
}

/// Any HTTP answer, even an error, means the server is there.
fn reached(response: gloo_net::http::Response) -> gloo_net::http::Response {
    crate::connection::found();
    response
}

async fn get<T: DeserializeOwned>(path: &str) -> Result<T, ApiError> {
    let text = get_text(path).await?;
    crate::json::parse(&text).map_err(unexpected)
}

/// A GET's successful body, as text.
async fn get_text(path: &str) -> Result<String, ApiError> {
    let response = with_credentials(Request::get(&format!("{BASE}{path}")))
        .send()
        .await
        .map(reached)
        .map_err(network)?;
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
    response.text().await.map_err(|e| unexpected(e.to_string()))
}

fn unexpected(e: impl std::fmt::Display) -> ApiError {
    ApiError::Other(format!("Unexpected answer from the server ({e})."))
}

/// A successful answer's body.
async fn read<T: DeserializeOwned>(response: gloo_net::http::Response) -> Result<T, ApiError> {
    let text = response
        .text()
        .await
        .map_err(|e| unexpected(e.to_string()))?;
    crate::json::parse(&text).map_err(unexpected)
}

async fn post(
    path: &str,
    body: &impl serde::Serialize,
) -> Result<gloo_net::http::Response, ApiError> {
    let body = crate::json::stringify(body).map_err(ApiError::Other)?;
    with_credentials(Request::post(&format!("{BASE}{path}")))
        .header("Content-Type", "application/json")
        .body(body)
        .map_err(|e| ApiError::Other(e.to_string()))?
        .send()
        .await
        .map(reached)
        .map_err(network)
}

/// One page of the tasks the caller can see; `filter` is more of the
/// query (`&order=newest&waiting=true`).
pub async fn tasks_page(
    limit: usize,
    cursor: &str,
    filter: &str,
) -> Result<crate::wire::TaskPage, ApiError> {
    get(&format!("/tasks?limit={limit}&cursor={cursor}{filter}")).await
}

/// The bundles waiting for the caller, oldest first: the first 200 (more
/// than anyone answers in a sitting; `next_cursor` says there are more).
pub async fn pending() -> Result<PendingPage, ApiError> {
    get("/pending?limit=200").await
}

/// Every workspace the caller can see.
pub async fn workspaces() -> Result<Vec<api::Workspace>, ApiError> {
    Ok(get::<api::Workspaces>("/workspaces").await?.workspaces)
}

/// One task.
pub async fn task(id: &str) -> Result<crate::wire::TaskRow, ApiError> {
    get(&format!("/tasks/{id}")).await
}

/// The task's sessions, primary first.
pub async fn sessions(task_id: &str) -> Result<Vec<crate::wire::SessionRow>, ApiError> {
    Ok(
        get::<crate::wire::SessionPage>(&format!("/tasks/{task_id}/sessions"))
            .await?
            .sessions,
    )
}

/// One session, with its active bundles as the server counts them.
pub async fn session(session_id: &str) -> Result<crate::wire::SessionRow, ApiError> {
    get(&format!("/sessions/{session_id}")).await
}

/// A session's whole transcript, page after page.
pub async fn messages(session_id: &str) -> Result<Vec<api::Message>, ApiError> {
    let mut all = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = get::<api::Messages>(&format!(
            "/sessions/{session_id}/messages?limit=200&cursor={cursor}"
        ))
        .await?;
        all.extend(page.messages);
        if page.next_cursor.is_empty() {
            return Ok(all);
        }
        cursor = page.next_cursor;
    }
}

/// One bundle, with the server's verdict on whether it is active.
pub async fn bundle(pending_id: &str) -> Result<api::BundleView, ApiError> {
    let text = get_text(&format!("/clarification/{pending_id}")).await?;
    crate::wire::bundle_view(&text).map_err(unexpected)
}

/// Who tried to answer `pending_id`, and when (the attempts log).
/// Read as plain JSON: the typed log's flattened fields would cost the wasm
/// a deserializer of their own, for a list only shown.
pub async fn attempts(pending_id: &str) -> Result<Value, ApiError> {
    get(&format!("/clarification/{pending_id}/attempts")).await
}

/// The caller's identity and whether auth is on.
pub async fn me() -> Result<api::Me, ApiError> {
    get("/auth/me").await
}

/// Logs in with a token; the server sets the cookie.
pub async fn login(token: &str) -> Result<(), ApiError> {
    let body = api::Login {
        token: token.to_owned(),
    };
    let response = post("/auth/login", &body).await?;
    if response.ok() {
        return Ok(());
    }
    if response.status() != 401 {
        return Err(error_of(response).await);
    }
    // The server says which: not a token at all, or one it does not know.
    let text = response.text().await.unwrap_or_default();
    let said = crate::json::parse::<clarify_core::ErrorBody>(&text)
        .ok()
        .map(|e| e.error.trim_start_matches("token: ").to_owned())
        .filter(|e| !e.is_empty());
    Err(ApiError::Other(said.map_or_else(
        || "That token was not accepted.".into(),
        |s| format!("That token was not accepted: {s}."),
    )))
}

/// Logs out.
pub async fn logout() -> Result<(), ApiError> {
    post("/auth/logout", &serde_json::Map::new())
        .await
        .map(drop)
}

/// Submits answers or a rejection and reads the body, because on a lost race
/// only the body says what the transcript must show (W3).
pub async fn respond(pending_id: &str, submission: &Submission) -> Result<SubmitOutcome, ApiError> {
    let response = post(&format!("/clarification/{pending_id}/respond"), submission).await?;
    match response.status() {
        200 => {
            let body: RespondBody = read(response).await?;
            if !body.claimed {
                Ok(SubmitOutcome::Lost(body.status, body.response))
            } else {
                Ok(SubmitOutcome::Claimed(body.status, body.response))
            }
        }
        409 => {
            let now = js_sys::Date::now();
            let why = bundle(pending_id)
                .await
                .map_or(Closed::Other, |view| Closed::of(&view, now));
            Ok(SubmitOutcome::Inactive(why))
        }
        _ => Err(error_of(response).await),
    }
}

/// Sets who `pending_id` is for (`""`: nobody in particular); the bundle
/// as it now is.
pub async fn assign(pending_id: &str, assignee: &str) -> Result<api::BundleView, ApiError> {
    let body = api::Assign {
        assignee: assignee.to_owned(),
    };
    let response = post(&format!("/clarification/{pending_id}/assign"), &body).await?;
    if !response.ok() {
        return Err(error_of(response).await);
    }
    let text = response
        .text()
        .await
        .map_err(|e| unexpected(e.to_string()))?;
    crate::wire::bundle_view(&text).map_err(unexpected)
}

/// Sends an answer as the page goes away (issue 46 item 2: a held answer
/// is never lost to a closed tab): a keep-alive request outlives the page;
/// its outcome is read by nobody, and the next visit shows it settled.
pub fn respond_on_leaving(pending_id: &str, alike: &[String], submission: &Submission) {
    let (path, body) = if alike.is_empty() {
        (
            format!("{BASE}/clarification/{pending_id}/respond"),
            crate::json::stringify(submission),
        )
    } else {
        let body = api::RespondAlike {
            pending_ids: std::iter::once(pending_id.to_owned())
                .chain(alike.iter().cloned())
                .collect(),
            response: submission.clone(),
        };
        (
            format!("{BASE}/clarification/respond-alike"),
            crate::json::stringify(&body),
        )
    };
    let Ok(body) = body else {
        return;
    };
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    // web-sys has no setter for it; the browser reads the plain property.
    let _ = js_sys::Reflect::set(&init, &"keepalive".into(), &true.into());
    init.set_credentials(RequestCredentials::Include);
    init.set_body(&wasm_bindgen::JsValue::from_str(&body));
    let headers = web_sys::Headers::new().ok();
    if let Some(headers) = &headers {
        let _ = headers.set("Content-Type", "application/json");
        init.set_headers(headers);
    }
    let _ = web_sys::window().map(|w| w.fetch_with_str_and_init(&path, &init));
}

/// Answers `pending_id` and, when `alike` names others asking the same,
/// them too with one request, each through its own claim.
pub async fn respond_all(
    pending_id: &str,
    alike: &[String],
    submission: &Submission,
) -> Result<SubmitOutcome, ApiError> {
    if alike.is_empty() {
        return respond(pending_id, submission).await;
    }
    let body = api::RespondAlike {
        pending_ids: std::iter::once(pending_id.to_owned())
            .chain(alike.iter().cloned())
            .collect(),
        response: submission.clone(),
    };
    let response = post("/clarification/respond-alike", &body).await?;
    if !response.ok() {
        return Err(error_of(response).await);
    }
    let outcomes: api::AlikeOutcomes = read(response).await?;
    let count =
        |f: fn(&api::AlikeOutcome) -> bool| outcomes.outcomes.iter().filter(|o| f(o)).count();
    Ok(SubmitOutcome::Alike {
        claimed: count(|o| o.claimed),
        lost: count(|o| !o.claimed && o.status.is_some()),
        closed: count(|o| o.status.is_none() && o.error.is_empty()),
    })
}
