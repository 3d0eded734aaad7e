//! Blocked MCP calls held outside rmcp (issue 31 item 3): rmcp serves a
//! bounded number of `/mcp/agent` requests at a time, and a blocked call
//! gives its turn back once it is handed over, so more agents than that
//! can block at once and every one is answered live.

use std::time::Duration;

use clarify_server::Config;
use clarify_tests::mcp::{call, connect, ok};
use clarify_tests::{TestServer, next_event};
use serde_json::json;

/// More than rmcp's turns (`turns::IN_RMCP`, 64).
const AGENTS: usize = 100;

#[tokio::test]
async fn more_agents_block_at_once_than_rmcp_serves_and_each_is_answered_live() {
    let server = TestServer::start_with(Config {
        max_open_sessions: Some(2 * AGENTS),
        ..Config::default()
    })
    .await;
    let mut socket = server.events().await;
    // Each agent's handshake and call need a turn too: a turn kept for the
    // whole wait (or lost) stops them here, and the test fails, not hangs.
    let calls = tokio::time::timeout(Duration::from_secs(60), async {
        let mut calls = Vec::with_capacity(AGENTS);
        for n in 0..AGENTS {
            let (_, _, token) = server.session(None).await;
            let agent = connect(&server, "/mcp/agent", Some(&token)).await;
            let args = json!({"questions": [{"prompt": format!("Question {n}?"),
                                         "options": [{"label": "a"}, {"label": "b"}]}]});
            calls.push(tokio::spawn(async move {
                call(&agent, "ask_user_question_kandev", &args).await
            }));
        }
        calls
    })
    .await
    .expect("every agent connects and calls while the others block");
    // Every call gets as far as its question, all at once: a turn kept for
    // the whole wait would stop the 65th here.
    let asked = tokio::time::timeout(Duration::from_secs(60), async {
        let mut asked = Vec::with_capacity(AGENTS);
        while asked.len() < AGENTS {
            let added = next_event(&mut socket, "session.message.added").await;
            asked.push(
                added["payload"]["metadata"]["pending_id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        asked
    })
    .await
    .expect("every agent's question is asked while the others block");
    for pending in &asked {
        let (status, won) = server
            .respond(
                pending,
                &json!({"answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]}),
            )
            .await;
        assert_eq!(status, 200, "{won}");
        assert_eq!(won["claimed"], true, "delivered to its blocked call: {won}");
    }
    for asking in calls {
        let result = ok(&asking.await.unwrap());
        assert_eq!(result["rejected"], false, "{result}");
        assert_eq!(result["answers"]["q1"]["selected_labels"], json!(["b"]));
    }
    server.stop().await;
}
