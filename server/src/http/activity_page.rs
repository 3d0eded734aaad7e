//! `GET /activity` (issue 49 item 2): the Activity page a person looks at,
//! written by the server like an answer link's page — the overlay's
//! header and stylesheet, small SVG charts each beside a table of its
//! numbers, no script, so it costs the overlay's wasm nothing.

use std::fmt::Write as _;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Router, routing::get};
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};

use super::activity::{ActivityQuery, TeamReads, read};
use super::activity_chart::{asked, bar, duration, time_to_answer};
use super::error::Error;
use super::page::{Heading, document};
use crate::activity::{Activity, Count, Day};
use crate::auth::identify::identify;
use crate::state::AppState;

/// The page's policy: our own stylesheet, nothing else.
const PAGE_CSP: &str = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// The spans a person picks from.
const SPANS: [u32; 4] = [7, 14, 30, 90];

/// `GET /activity`.
pub fn routes() -> Router<AppState> {
    Router::new().route("/activity", get(show))
}

async fn show(
    State(state): State<AppState>,
    Extension(reads): Extension<TeamReads>,
    headers: HeaderMap,
    Query(query): Query<ActivityQuery>,
) -> Response {
    let outcome = async {
        let days = query.days()?;
        let caller = Box::pin(identify(state.db(), &headers, state.config.auth))
            .await
            .map_err(crate::lifecycle::Error::from)?
            .ok_or(Error::Unauthorized)?;
        read(&state, &reads, &caller, days).await
    }
    .await;
    let (status, body) = match outcome {
        Ok(activity) => (StatusCode::OK, render(&activity)),
        Err(Error::Unauthorized) => (
            StatusCode::UNAUTHORIZED,
            document(
                Heading::Home,
                "Activity",
                "Activity",
                "activity",
                "<h2>Activity</h2><p role=\"alert\">Log in to see your team's activity. \
                 <a href=\"/login\">Log in</a></p>",
            ),
        ),
        Err(error) => {
            if let Error::Internal(cause) = &error {
                tracing::error!(error = %cause, "internal error");
            }
            (
                error.status_code(),
                document(
                    Heading::Home,
                    "Activity",
                    "Activity",
                    "activity",
                    &format!(
                        "<h2>Activity</h2><p role=\"alert\">{}</p>",
                        text(&error.to_string())
                    ),
                ),
            )
        }
    };
    let mut response = (status, Html(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn render(a: &Activity) -> String {
    let mut body = format!(
        "<h2>Activity</h2><p class=\"hint\" data-testid=\"activity-summary\">The last {} days \
         (UTC): <strong>{}</strong> asked, <strong>{}</strong> answered.{}</p>",
        a.days,
        a.asked,
        a.answered,
        if a.sampled {
            " More were asked than one view reads: the figures cover the newest 20,000."
        } else {
            ""
        }
    );
    body.push_str("<nav class=\"spans\" aria-label=\"Days shown\">");
    for span in SPANS {
        let current = if span == a.days {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            body,
            "<a href=\"/activity?days={span}\"{current}>{span} days</a>"
        );
    }
    body.push_str("</nav>");
    per_day(&mut body, &a.per_day);
    ranked(
        &mut body,
        "Answers by channel",
        "Channel",
        "Answers",
        &a.channels,
        channel,
    );
    ranked(
        &mut body,
        "Answers by person",
        "Person",
        "Answers",
        &a.people,
        |c| c.name.clone(),
    );
    ranked(
        &mut body,
        "Tasks that ask most",
        "Task",
        "Asked",
        &a.tasks,
        |c| c.name.clone(),
    );
    ranked(
        &mut body,
        "Agents that ask most",
        "Agent",
        "Asked",
        &a.agents,
        |c| c.name.clone(),
    );
    waiting(&mut body, a);
    document(Heading::Home, "Activity", "Activity", "activity", &body)
}

fn per_day(body: &mut String, days: &[Day]) {
    let (first, last) = (
        days.first().map_or_else(String::new, |d| short(&d.day)),
        days.last().map_or_else(String::new, |d| short(&d.day)),
    );
    let axis = format!(
        "<p class=\"axis\" aria-hidden=\"true\"><span>{first}</span><span>{last}</span></p>"
    );
    let _ = write!(
        body,
        "<figure><figcaption><h3>Questions per day</h3></figcaption>{}{axis}</figure>\
         <figure><figcaption><h3>Time to answer</h3>\
         <p class=\"legend\" aria-hidden=\"true\"><span class=\"key median\"></span> median \
         <span class=\"key p90\"></span> 90th percentile</p></figcaption>{}{axis}</figure>",
        asked(days),
        time_to_answer(days),
    );
    body.push_str(
        "<table data-testid=\"per-day\"><caption>Each day (UTC): questions asked, answered, and \
         the median and 90th percentile of time to answer</caption><thead><tr>\
         <th scope=\"col\">Day</th><th scope=\"col\">Asked</th><th scope=\"col\">Answered</th>\
         <th scope=\"col\">Median</th><th scope=\"col\">p90</th></tr></thead><tbody>",
    );
    // A run of days with nothing asked is one row, so the numbers read
    // as quickly as the chart does.
    let mut i = 0;
    while i < days.len() {
        let day = &days[i];
        let quiet = days[i..].iter().take_while(|d| d.asked == 0).count();
        let label = if quiet > 1 {
            format!("{} to {}", short(&day.day), short(&days[i + quiet - 1].day))
        } else {
            short(&day.day)
        };
        let _ = write!(
            body,
            "<tr><th scope=\"row\">{label}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            day.asked,
            day.answered,
            day.median_seconds.map_or_else(|| "–".to_owned(), duration),
            day.p90_seconds.map_or_else(|| "–".to_owned(), duration),
        );
        i += quiet.max(1);
    }
    body.push_str("</tbody></table>");
}

/// `2026-12-06` as `Dec 6`.
fn short(day: &str) -> String {
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_or_else(|_| day.to_owned(), |d| d.format("%b %-d").to_string())
}

/// A ranked list as a table, a bar in each row beside its number.
fn ranked(
    body: &mut String,
    title: &str,
    what: &str,
    counted: &str,
    rows: &[Count],
    name: impl Fn(&Count) -> String,
) {
    let id: String = title
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let _ = write!(body, "<h3 id=\"{id}\">{title}</h3>");
    if rows.is_empty() {
        body.push_str("<p class=\"hint\">None in these days.</p>");
        return;
    }
    let most = rows.first().map_or(1, |c| c.count);
    let _ = write!(
        body,
        "<table class=\"ranked\" aria-labelledby=\"{id}\"><thead><tr><th scope=\"col\">{what}</th>\
         <th scope=\"col\">{counted}</th><th scope=\"col\"><span class=\"visually-hidden\">Share\
         </span></th></tr></thead><tbody>"
    );
    for row in rows {
        let _ = write!(
            body,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td class=\"bar-cell\">{}</td></tr>",
            text(&name(row)),
            row.count,
            bar(row.count, most),
        );
    }
    body.push_str("</tbody></table>");
}

fn channel(count: &Count) -> String {
    match clarify_core::Channel::phrase(&count.id) {
        "" => count.id.clone(),
        phrase => format!("{} ({phrase})", count.id),
    }
}

fn waiting(body: &mut String, a: &Activity) {
    body.push_str("<h3 id=\"waiting-longest\">Waiting longest</h3>");
    if a.waiting.is_empty() {
        body.push_str("<p class=\"hint\">Nothing is waiting.</p>");
        return;
    }
    body.push_str(
        "<table data-testid=\"waiting\" aria-labelledby=\"waiting-longest\"><thead><tr><th scope=\"col\">Question</th>\
         <th scope=\"col\">For</th><th scope=\"col\">Waiting</th></tr></thead><tbody>",
    );
    for w in &a.waiting {
        let _ = write!(
            body,
            "<tr><th scope=\"row\"><a href=\"/t/{}\">{}</a></th><td>{}</td><td>{}</td></tr>",
            attr(&w.task_id),
            text(&w.prompt),
            if w.assignee.is_empty() {
                "anyone".to_owned()
            } else {
                text(&w.assignee).into_owned()
            },
            duration(seconds(w.waiting_seconds)),
        );
    }
    body.push_str("</tbody></table>");
}

#[allow(clippy::cast_precision_loss)] // seconds far below 2^52
fn seconds(whole: i64) -> f64 {
    whole as f64
}
