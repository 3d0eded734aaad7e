//! The Activity figures made from the bundles asked (issue 49 item 2):
//! pure, so each number is checked against a hand count.

use std::collections::HashMap;

use chrono::DateTime;
use serde::Serialize;

use crate::db::activity::Asked;

/// Rows a list of names (channels, people, tasks, agents) shows.
pub const TOP: usize = 10;

const DAY_MICROS: i64 = 86_400_000_000;

/// One day (UTC) of the span.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Day {
    /// `2026-12-06`.
    pub day: String,
    /// Bundles asked that day.
    pub asked: u64,
    /// Of those, answered or declined by a person so far.
    pub answered: u64,
    /// Seconds from asked to answered of those (nearest rank), `null`
    /// when none was.
    pub median_seconds: Option<f64>,
    /// The 90th percentile of the same (nearest rank).
    pub p90_seconds: Option<f64>,
}

/// A name and how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Count {
    /// Its id: a channel's wire name, a user's name, a task's or session's id.
    pub id: String,
    /// What a person reads: a task's title, a session's description.
    pub name: String,
    /// How many.
    pub count: u64,
}

/// Everything made from the rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figures {
    pub asked: u64,
    pub answered: u64,
    pub per_day: Vec<Day>,
    pub channels: Vec<Count>,
    pub people: Vec<Count>,
    pub tasks: Vec<Count>,
    pub agents: Vec<Count>,
}

/// Whether `row` was answered or declined by a person (not by its
/// defaults as it expired, not cancelled), and after how many seconds.
fn answered_after(row: &Asked) -> Option<f64> {
    let settled = matches!(row.status.as_str(), "answered" | "rejected");
    let by_person = !row.by_channel.is_empty() && row.by_channel != "expiry";
    #[allow(clippy::cast_precision_loss)] // microseconds to seconds, shown rounded
    (settled && by_person).then(|| (row.updated_at - row.created_at).max(0) as f64 / 1e6)
}

/// The figures of `rows` over `days` UTC days ending with the one holding
/// `now` (microseconds), oldest day first.
#[must_use]
pub fn figures(rows: &[Asked], now: i64, days: u32) -> Figures {
    let first = span_start(now, days).div_euclid(DAY_MICROS);
    let mut asked = vec![0_u64; usize::try_from(days.max(1)).unwrap_or(1)];
    let mut waits: Vec<Vec<f64>> = vec![Vec::new(); asked.len()];
    let (mut channels, mut people, mut tasks, mut agents) = (
        Tally::default(),
        Tally::default(),
        Tally::default(),
        Tally::default(),
    );
    let mut answered = 0;
    for row in rows {
        let Ok(day) = usize::try_from(row.created_at.div_euclid(DAY_MICROS) - first) else {
            continue;
        };
        let Some(slot) = asked.get_mut(day) else {
            continue;
        };
        *slot += 1;
        tasks.add(&row.task_id, || row.task_title.clone());
        agents.add(&row.session_id, || agent_name(row));
        if let Some(seconds) = answered_after(row) {
            answered += 1;
            waits[day].push(seconds);
            channels.add(&row.by_channel, || row.by_channel.clone());
            people.add(&row.by_user, || row.by_user.clone());
        }
    }
    let per_day = asked
        .iter()
        .zip(&mut waits)
        .enumerate()
        .map(|(i, (asked, waits))| {
            waits.sort_by(f64::total_cmp);
            Day {
                day: date(first + i64::try_from(i).unwrap_or_default()),
                asked: *asked,
                answered: waits.len() as u64,
                median_seconds: percentile(waits, 50),
                p90_seconds: percentile(waits, 90),
            }
        })
        .collect();
    Figures {
        asked: asked.iter().sum(),
        answered,
        per_day,
        channels: channels.top(),
        people: people.top(),
        tasks: tasks.top(),
        agents: agents.top(),
    }
}

/// An agent as a person tells it apart: what its session says it is, else
/// its task's title and the end of its session's id (a UUIDv7's start is
/// its time, alike for sessions begun together).
fn agent_name(row: &Asked) -> String {
    if row.session_description.trim().is_empty() {
        let id = &row.session_id;
        let end = id.len().saturating_sub(6);
        format!(
            "{}, session …{}",
            row.task_title,
            id.get(end..).unwrap_or(id)
        )
    } else {
        row.session_description.clone()
    }
}

/// The first instant (microseconds) of the `days` UTC days ending with the
/// one holding `now`: what the read asks from and the figures count from.
#[must_use]
pub fn span_start(now: i64, days: u32) -> i64 {
    (now.div_euclid(DAY_MICROS) - i64::from(days.max(1)) + 1) * DAY_MICROS
}

/// The `p`th percentile of `sorted` by nearest rank (the smallest value
/// with at least `p`% at or below it), rounded to milliseconds.
#[must_use]
pub fn percentile(sorted: &[f64], p: usize) -> Option<f64> {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted
        .get(rank - 1)
        .map(|seconds| (seconds * 1000.0).round() / 1000.0)
}

fn date(day: i64) -> String {
    DateTime::from_timestamp(day * 86_400, 0)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

/// Counts by id, remembering each id's name.
#[derive(Default)]
struct Tally(HashMap<String, (String, u64)>);

impl Tally {
    /// One more for `id`; its name made only the first time (a view
    /// reads up to 20,000 rows, mostly of ids seen already).
    fn add(&mut self, id: &str, name: impl FnOnce() -> String) {
        match self.0.get_mut(id) {
            Some((_, count)) => *count += 1,
            None => {
                self.0.insert(id.to_owned(), (name(), 1));
            }
        }
    }

    /// The [`TOP`] most counted, most first, then by name.
    fn top(self) -> Vec<Count> {
        let mut all: Vec<Count> = self
            .0
            .into_iter()
            .map(|(id, (name, count))| Count { id, name, count })
            .collect();
        all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        all.truncate(TOP);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DAY: i64 = DAY_MICROS;
    const NOW: i64 = 20_000 * DAY + 3_600_000_000;

    fn row(
        day_ago: i64,
        after_seconds: Option<i64>,
        channel: &str,
        user: &str,
        task: &str,
    ) -> Asked {
        let created_at = NOW - day_ago * DAY;
        Asked {
            created_at,
            updated_at: created_at + after_seconds.unwrap_or(0) * 1_000_000,
            status: if after_seconds.is_some() {
                "answered"
            } else {
                ""
            }
            .to_owned(),
            by_user: user.to_owned(),
            by_channel: channel.to_owned(),
            task_id: task.to_owned(),
            task_title: format!("{task} title"),
            session_id: format!("s-{task}"),
            session_description: String::new(),
        }
    }

    #[test]
    fn each_figure_matches_a_hand_count() {
        let rows = [
            row(0, Some(10), "browser", "alice", "t1"),
            row(0, Some(30), "slack", "bob", "t1"),
            row(0, None, "", "", "t2"),
            row(1, Some(100), "browser", "alice", "t1"),
            row(9, Some(5), "browser", "alice", "t3"), // outside 3 days
        ];
        let f = figures(&rows, NOW, 3);
        assert_eq!(f.asked, 4);
        assert_eq!(f.answered, 3);
        let days: Vec<(u64, u64)> = f.per_day.iter().map(|d| (d.asked, d.answered)).collect();
        assert_eq!(days, [(0, 0), (1, 1), (3, 2)]);
        assert_eq!(f.per_day[2].day, "2024-10-04");
        assert_eq!(f.per_day[2].median_seconds, Some(10.0));
        assert_eq!(f.per_day[2].p90_seconds, Some(30.0));
        assert_eq!(f.per_day[0].median_seconds, None);
        assert_eq!(
            f.channels[0],
            Count {
                id: "browser".into(),
                name: "browser".into(),
                count: 2
            }
        );
        assert_eq!(f.people[0].id, "alice");
        assert_eq!(
            f.tasks[0],
            Count {
                id: "t1".into(),
                name: "t1 title".into(),
                count: 3
            }
        );
    }

    #[test]
    fn defaults_chosen_at_expiry_and_cancellations_are_no_answers() {
        let mut expired = row(0, Some(60), "expiry", "", "t1");
        expired.status = "answered".into();
        let mut cancelled = row(0, Some(5), "", "", "t1");
        cancelled.status = "cancelled".into();
        let f = figures(&[expired, cancelled], NOW, 1);
        assert_eq!((f.asked, f.answered), (2, 0));
        assert!(f.channels.is_empty());
    }

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50), Some(5.0));
        assert_eq!(percentile(&v, 90), Some(9.0));
        assert_eq!(percentile(&v[..1], 90), Some(1.0));
        assert_eq!(percentile(&[], 50), None);
    }

    proptest! {
        /// However the rows fall, the days add up and median ≤ p90.
        #[test]
        fn the_days_add_up(spec in prop::collection::vec((0_i64..10, prop::option::of(0_i64..1000)), 0..60)) {
            let rows: Vec<Asked> = spec
                .iter()
                .map(|(ago, after)| row(*ago, *after, "browser", "a", "t"))
                .collect();
            let f = figures(&rows, NOW, 7);
            prop_assert_eq!(f.per_day.len(), 7);
            prop_assert_eq!(f.per_day.iter().map(|d| d.asked).sum::<u64>(), f.asked);
            prop_assert_eq!(f.asked as usize, spec.iter().filter(|(ago, _)| *ago < 7).count());
            for day in &f.per_day {
                prop_assert!(day.answered <= day.asked);
                if let (Some(m), Some(p)) = (day.median_seconds, day.p90_seconds) {
                    prop_assert!(m <= p);
                }
            }
        }
    }
}
