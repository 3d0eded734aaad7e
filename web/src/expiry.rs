//! "Expires in 4 min": a countdown for a question that expires on purpose,
//! ticking while it is shown ("Expired" once its time is up; the server's
//! event then closes it).

use std::time::Duration;

use leptos::prelude::*;

/// What is left, as a person says it.
pub fn expiry_text(seconds_left: i64) -> String {
    match seconds_left {
        s if s <= 0 => "Expired".to_owned(),
        s if s < 60 => format!("Expires in {s} s"),
        s if s < 3600 => format!("Expires in {} min", (s + 59) / 60),
        s if s < 86_400 => format!("Expires in {} h", s / 3600),
        s => format!("Expires in {} d", s / 86_400),
    }
}

/// How near the end is: `""`, then `"soon"` under 5 minutes and `"urgent"`
/// under 1 (issue 29: amber, then red).
pub fn urgency(seconds_left: i64) -> &'static str {
    match seconds_left {
        s if s < 60 => "urgent",
        s if s < 300 => "soon",
        _ => "",
    }
}

/// When `at` (RFC 3339) is, in the milliseconds [`Countdown`] takes.
pub fn deadline(at: &str) -> f64 {
    js_sys::Date::parse(at)
}

/// The countdown to `deadline` (milliseconds since the epoch).
#[component]
pub fn Countdown(deadline: f64) -> impl IntoView {
    let now = RwSignal::new(js_sys::Date::now());
    let ticking =
        set_interval_with_handle(move || now.set(js_sys::Date::now()), Duration::from_secs(1)).ok();
    on_cleanup(move || {
        if let Some(handle) = ticking {
            handle.clear();
        }
    });
    let left = move || ((deadline - now.get()) / 1000.0).ceil() as i64;
    view! {
        <span class="expiry" data-testid="clarification-expiry" data-urgency=move || urgency(left())>
            {move || expiry_text(left())}
        </span>
    }
}

#[cfg(test)]
mod tests {
    use super::{expiry_text, urgency};

    #[test]
    fn amber_under_five_minutes_red_under_one() {
        assert_eq!(urgency(301), "");
        assert_eq!(urgency(299), "soon");
        assert_eq!(urgency(60), "soon");
        assert_eq!(urgency(59), "urgent");
        assert_eq!(urgency(-5), "urgent");
    }

    #[test]
    fn what_is_left_reads_as_a_person_says_it() {
        assert_eq!(expiry_text(-1), "Expired");
        assert_eq!(expiry_text(0), "Expired");
        assert_eq!(expiry_text(42), "Expires in 42 s");
        assert_eq!(expiry_text(61), "Expires in 2 min");
        assert_eq!(expiry_text(240), "Expires in 4 min");
        assert_eq!(expiry_text(7200), "Expires in 2 h");
        assert_eq!(expiry_text(3 * 86_400), "Expires in 3 d");
    }
}
