//! R3 races: many concurrent answers, exactly one winner.

use serde_json::{Value, json};

use crate::server::TestServer;

/// Answers `pending_id` with `racers` concurrent REST calls spread over
/// `servers` in turn, each picking an option and a text of its own; returns
/// every (status, body).
///
/// # Panics
/// When a request fails at the HTTP level.
pub async fn race_answers(
    servers: &[&TestServer],
    pending_id: &str,
    racers: usize,
) -> Vec<(u16, Value)> {
    let mut tasks = Vec::with_capacity(racers);
    for racer in 0..racers {
        let through = servers[racer % servers.len()];
        let client = through.client().clone();
        let url = through.url(&format!("/api/v1/clarification/{pending_id}/respond"));
        let option = if racer % 3 == 0 { "q1_opt1" } else { "q1_opt2" };
        tasks.push(tokio::spawn(async move {
            let body = json!({"answers": [{"question_id": "q1", "selected_options": [option],
                                           "custom_text": format!("racer {racer}")}]});
            let response = client.post(url).json(&body).send().await.expect("request");
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.expect("JSON body"))
        }));
    }
    let mut results = Vec::with_capacity(racers);
    for task in tasks {
        results.push(task.await.expect("racer"));
    }
    results
}

/// R3: exactly one racer claimed; every other got 200 with the winner's answer.
///
/// # Panics
/// When that does not hold.
pub fn assert_exactly_one_winner(results: &[(u16, Value)]) {
    let winners: Vec<&Value> = results
        .iter()
        .filter(|(_, body)| body["claimed"] == true)
        .map(|(_, body)| body)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for (status, body) in results {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(
            body["response"]["answers"], winners[0]["response"]["answers"],
            "losers see the winner"
        );
    }
}
