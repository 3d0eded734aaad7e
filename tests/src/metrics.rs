//! Reading a server's `/metrics` as a test does: the exposition, and one
//! sample of it.

use crate::TestServer;

/// `GET /metrics` on `server`, as text.
///
/// # Panics
/// When the request fails.
pub async fn scrape(server: &TestServer) -> String {
    let response = server.client().get(server.url("/metrics")).send().await;
    response.unwrap().text().await.unwrap()
}

/// The sample `series` (a name with its labels, `name{k="v"}`) reads in
/// `text`, if any.
#[must_use]
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}
