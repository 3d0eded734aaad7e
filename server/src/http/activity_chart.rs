//! The Activity page's small charts (issue 49 item 2): inline SVG written
//! on the server, no chart library and no script. Each is only a picture
//! (`aria-hidden`): its numbers are in a table next to it, which is what a
//! screen reader reads. Colours come from the stylesheet, so light and
//! dark follow the overlay's.

use std::fmt::Write as _;

use crate::activity::Day;

/// A day's column in the viewBox, and the chart's height.
const STEP: usize = 10;
const HEIGHT: f64 = 100.0;

fn svg(class: &str, days: usize, inner: &str) -> String {
    format!(
        "<svg class=\"chart {class}\" viewBox=\"0 0 {} {HEIGHT}\" preserveAspectRatio=\"none\" \
         aria-hidden=\"true\" focusable=\"false\">{inner}</svg>",
        days * STEP
    )
}

/// One bar per day of the questions asked, scaled to the busiest day.
pub fn asked(days: &[Day]) -> String {
    let most = days.iter().map(|d| d.asked).max().unwrap_or(0).max(1);
    let mut bars = String::new();
    for (i, day) in days.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        let h = day.asked as f64 / most as f64 * HEIGHT;
        column(&mut bars, i, h, "asked");
    }
    svg("per-day", days.len(), &bars)
}

/// Per day, the p90 of time to answer as an outlined bar and the median
/// as a filled one inside it, scaled to the longest p90.
pub fn time_to_answer(days: &[Day]) -> String {
    let longest = days
        .iter()
        .filter_map(|d| d.p90_seconds)
        .fold(0.0_f64, f64::max)
        .max(f64::EPSILON);
    let mut bars = String::new();
    for (i, day) in days.iter().enumerate() {
        if let (Some(median), Some(p90)) = (day.median_seconds, day.p90_seconds) {
            column(&mut bars, i, p90 / longest * HEIGHT, "p90");
            column(&mut bars, i, median / longest * HEIGHT, "median");
        }
    }
    svg("per-day", days.len(), &bars)
}

fn column(out: &mut String, i: usize, height: f64, class: &str) {
    // A day with some but few still shows a sliver.
    let height = if height > 0.0 { height.max(1.5) } else { 0.0 };
    let _ = write!(
        out,
        "<rect class=\"{class}\" x=\"{}\" y=\"{:.2}\" width=\"{}\" height=\"{height:.2}\" \
         vector-effect=\"non-scaling-stroke\"/>",
        i * STEP + 1,
        HEIGHT - height,
        STEP - 2,
    );
}

/// A horizontal bar `count` of `most` long, for a table's cell.
pub fn bar(count: u64, most: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // counts far below 2^52
    let width = count as f64 / most.max(1) as f64 * 100.0;
    format!(
        "<svg class=\"bar\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" \
         aria-hidden=\"true\" focusable=\"false\"><rect width=\"{width:.2}\" height=\"10\"/></svg>"
    )
}

/// Seconds as a person reads them: `8.5 s`, `42 s`, `3.2 min`, `5.0 h`,
/// `2.1 d`.
pub fn duration(seconds: f64) -> String {
    if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else if seconds < 60.0 {
        format!("{seconds:.0} s")
    } else if seconds < 3_600.0 {
        format!("{:.1} min", seconds / 60.0)
    } else if seconds < 86_400.0 {
        format!("{:.1} h", seconds / 3_600.0)
    } else {
        format!("{:.1} d", seconds / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(asked: u64, median: Option<f64>, p90: Option<f64>) -> Day {
        Day {
            day: "2026-12-06".into(),
            asked,
            answered: 0,
            median_seconds: median,
            p90_seconds: p90,
        }
    }

    #[test]
    fn the_busiest_day_fills_the_chart_and_an_empty_one_draws_nothing() {
        let svg = asked(&[day(0, None, None), day(4, None, None), day(2, None, None)]);
        assert!(svg.contains("viewBox=\"0 0 30 100\""), "{svg}");
        assert!(
            svg.contains("x=\"11\" y=\"0.00\" width=\"8\" height=\"100.00\""),
            "{svg}"
        );
        assert!(
            svg.contains("x=\"21\" y=\"50.00\" width=\"8\" height=\"50.00\""),
            "{svg}"
        );
        assert!(svg.contains("height=\"0.00\""), "{svg}");
        assert!(svg.contains("aria-hidden=\"true\""));
    }

    #[test]
    fn the_median_sits_inside_its_p90() {
        let svg = time_to_answer(&[day(3, Some(10.0), Some(40.0)), day(0, None, None)]);
        assert!(svg.contains("class=\"p90\" x=\"1\" y=\"0.00\""), "{svg}");
        assert!(
            svg.contains("class=\"median\" x=\"1\" y=\"75.00\""),
            "{svg}"
        );
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(0.26), "0.3 s");
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(192.0), "3.2 min");
        assert_eq!(duration(18_000.0), "5.0 h");
        assert_eq!(duration(181_440.0), "2.1 d");
    }
}
