//! `clarify serve --demo`: a built-in agent that shows Clarify at work. It is
//! an ordinary client of the running server — the agent REST surface and a
//! resume webhook of its own — asking a two-question bundle, then a question
//! it stops waiting for and is resumed on when the human answers anyway.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Json;
use axum::routing::post;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::client::{Client, error_text};

/// Prints one line of the demo's story on stdout.
fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "demo: {line}");
    let _ = stdout.flush();
}

/// Binds the demo agent's own resume webhook on 127.0.0.1:0; the server
/// must let webhooks reach it (with auth on, loopback is otherwise refused).
///
/// # Errors
/// When it cannot bind.
pub async fn bind_webhook() -> Result<TcpListener, String> {
    TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("demo webhook: {e}"))
}

/// Runs the demo agent against the server at `addr` (with `token` when
/// auth is on), resumed through `webhook`; `patience` is how long it waits
/// on its second question.
pub async fn run(
    addr: SocketAddr,
    token: Option<String>,
    patience: Duration,
    webhook: TcpListener,
) {
    if let Err(message) = story(addr, token, patience, webhook).await {
        say(&format!("stopped: {message}"));
    }
}

async fn story(
    addr: SocketAddr,
    token: Option<String>,
    patience: Duration,
    webhook: TcpListener,
) -> Result<(), String> {
    let base = format!("http://{addr}");
    let user = Client::new(&base, token);
    let (resumes, mut resumed) = mpsc::channel::<Value>(4);
    let webhook = resume_webhook(webhook, resumes)?;

    let workspace = expect(
        user.post("/workspaces", &json!({"name": "Demo"})).await?,
        201,
    )?;
    let task = expect(
        user.post(
            "/tasks",
            &json!({"title": "Demo: set up a new service", "workspace_id": workspace["id"],
                    "description": "A built-in demo agent that asks you questions."}),
        )
        .await?,
        201,
    )?;
    let task_id = task["id"].as_str().unwrap_or_default();
    let session = expect(
        user.post(
            &format!("/tasks/{task_id}/sessions"),
            &json!({"resume": {"webhook_url": webhook}}),
        )
        .await?,
        201,
    )?;
    let agent = Client::new(&base, session["agent_token"].as_str().map(str::to_owned));
    let session_id = session["id"].as_str().unwrap_or_default().to_owned();
    say(&format!(
        "open {base}/t/{task_id} to answer the demo agent's questions"
    ));

    // 1. A bundle the agent blocks on until the human answers.
    let first_bundle = json!({
            "context": "I'm setting up a new service and need two decisions from you.",
            "questions": [
                {"title": "Database", "prompt": "Which database should the service use?",
                 "options": [{"label": "SQLite", "description": "one file, no server"},
                             {"label": "PostgreSQL", "description": "for several replicas"}]},
                {"title": "Deploy", "prompt": "When should I deploy it?",
                 "options": [{"label": "Now"}, {"label": "After review"}, {"label": "Friday"}]}
            ]
    });
    let first = ask(&agent, first_bundle.clone()).await?;
    say(&format!(
        "asked {first} (2 questions); waiting for your answer"
    ));
    let answer = wait(&agent, &first, None).await?;
    say(&format!("received: {}", describe(&answer, &first_bundle)));

    // 2. A question the agent stops waiting for; answering it anyway resumes
    //    the agent through its webhook.
    let turn = expect(agent_turn(&user, &session_id).await?, 201)?;
    let second_bundle = json!({"questions": [
        {"prompt": "Should I also write a README for the service?",
         "options": [{"label": "Yes"}, {"label": "No"}]}
    ]});
    let second = ask(&agent, second_bundle.clone()).await?;
    say(&format!(
        "asked {second}; I will only wait {}s for this one",
        patience.as_secs()
    ));
    let answer = wait(&agent, &second, Some(patience)).await?;
    if !answer.is_null() {
        say(&format!("received: {}", describe(&answer, &second_bundle)));
        say("finished");
        return Ok(());
    }
    let turn_id = turn["id"].as_str().unwrap_or_default();
    expect(
        user.post(
            &format!("/sessions/{session_id}/turns/{turn_id}/complete"),
            &json!({}),
        )
        .await?,
        200,
    )?;
    say("stopped waiting and moved on; answer it anyway and I will be resumed");
    let resume = resumed.recv().await.ok_or("the resume webhook closed")?;
    let prompt = resume["prompt"]
        .as_str()
        .unwrap_or_default()
        .replace('\n', " / ");
    say(&format!("resumed with: {prompt}"));
    say("finished");
    Ok(())
}

async fn agent_turn(user: &Client, session_id: &str) -> Result<crate::client::Reply, String> {
    user.post(&format!("/sessions/{session_id}/turns"), &json!({}))
        .await
}

fn expect(reply: crate::client::Reply, status: u16) -> Result<Value, String> {
    if reply.0 == status {
        Ok(reply.1)
    } else {
        Err(error_text(&reply))
    }
}

async fn ask(agent: &Client, bundle: Value) -> Result<String, String> {
    let mut bundle = bundle;
    bundle["attach"] = json!(true);
    let created = expect(agent.post("/clarification/request", &bundle).await?, 201)?;
    Ok(created["pending_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

/// Waits for the answer; `Null` when `patience` ran out first.
async fn wait(
    agent: &Client,
    pending_id: &str,
    patience: Option<Duration>,
) -> Result<Value, String> {
    let started = tokio::time::Instant::now();
    loop {
        let left = patience.map(|p| p.saturating_sub(started.elapsed()));
        if left == Some(Duration::ZERO) {
            return Ok(Value::Null);
        }
        let timeout = left.map_or(25, |l| l.as_secs().clamp(1, 25));
        let reply = agent
            .get(&format!(
                "/clarification/{pending_id}/wait?timeout={timeout}"
            ))
            .await?;
        match reply.0 {
            200 => return Ok(reply.1["response"].clone()),
            503 | 504 => {}
            _ => return Err(error_text(&reply)),
        }
    }
}

/// What the person chose, in the words of the question `asked` (issue 29):
/// "Database: PostgreSQL; Deploy: After review, \"Friday is a holiday\"".
fn describe(response: &Value, asked: &Value) -> String {
    if response["rejected"] == true {
        return "you declined to answer".to_owned();
    }
    let Some(answers) = response["answers"].as_array() else {
        return String::new();
    };
    answers
        .iter()
        .map(|a| {
            let id = a["question_id"].as_str().unwrap_or("?");
            // `q2` is the second question; `q2_opt3` its third option.
            let index = |text: &str, prefix: &str| {
                text.strip_prefix(prefix)
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
            };
            let question = index(id, "q").map(|n| &asked["questions"][n]);
            let name = question
                .and_then(|q| q["title"].as_str())
                .unwrap_or(id)
                .to_owned();
            let mut said: Vec<String> = a["selected_options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|option| {
                    let label = index(option, &format!("{id}_opt"))
                        .zip(question)
                        .and_then(|(n, q)| q["options"][n]["label"].as_str());
                    label.unwrap_or(option).to_owned()
                })
                .collect();
            if let Some(text) = a["custom_text"].as_str().filter(|t| !t.is_empty()) {
                said.push(format!("\"{text}\""));
            }
            if said.is_empty() {
                said.push("nothing".to_owned());
            }
            format!("{name}: {}", said.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Serves the demo agent's own resume webhook on `listener`.
fn resume_webhook(listener: TcpListener, resumes: mpsc::Sender<Value>) -> Result<String, String> {
    let addr = listener.local_addr().map_err(|e| format!("webhook: {e}"))?;
    let app = axum::Router::new().route(
        "/resume",
        post(move |Json(body): Json<Value>| {
            let resumes = resumes.clone();
            async move {
                let _ = resumes.send(body).await;
                "resumed"
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(format!("http://{addr}/resume"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_choice_is_told_in_the_words_of_the_question() {
        let asked = json!({"questions": [
            {"title": "Database", "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]},
            {"prompt": "When?", "options": [{"label": "Now"}, {"label": "Later"}]}]});
        let answer = json!({"answers": [
            {"question_id": "q1", "selected_options": ["q1_opt2"]},
            {"question_id": "q2", "selected_options": [], "custom_text": "after lunch"}]});
        assert_eq!(
            super::describe(&answer, &asked),
            "Database: PostgreSQL; q2: \"after lunch\""
        );
        assert_eq!(
            super::describe(&json!({"rejected": true}), &asked),
            "you declined to answer"
        );
    }
}
