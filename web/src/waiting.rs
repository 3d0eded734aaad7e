//! What waits for the person at this tab: the bundles they may answer
//! (`GET /pending`), kept live by the socket, shown by the inbox and
//! counted in the tab's title and icon, with opt-in notifications.

use std::collections::HashSet;
use std::time::Duration;

use clarify_core::PendingBundle;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::{api, notify, ws};

/// The live list, shared by every page through the context.
#[derive(Debug, Clone, Copy)]
pub struct Waiting {
    /// Oldest first.
    pub bundles: RwSignal<Vec<PendingBundle>>,
    /// More wait than the first page holds.
    pub more: RwSignal<bool>,
    /// The first load has answered.
    pub loaded: RwSignal<bool>,
    /// Why the last load failed.
    pub error: RwSignal<Option<String>>,
    /// Which load may write (loads overlap; the newest wins).
    generation: StoredValue<u64>,
}

impl Waiting {
    /// The tracker, in the context for every page below the caller; nothing
    /// is loaded until [`Waiting::start`].
    pub fn provide() -> Self {
        let waiting = Self {
            bundles: RwSignal::new(Vec::new()),
            more: RwSignal::new(false),
            loaded: RwSignal::new(false),
            error: RwSignal::new(None),
            generation: StoredValue::new(0),
        };
        provide_context(waiting);
        Effect::new(move || {
            let count = waiting.bundles.with(Vec::len);
            show_count(count, waiting.more.get());
        });
        waiting
    }

    /// The tracker of the page.
    pub fn get() -> Self {
        expect_context::<Self>()
    }

    /// Loads now, and again on every event (someone asked, answered, or a
    /// session changed state).
    pub fn start(self) {
        self.load();
        ws::listen(move |_| self.load());
        // Ages ("3 min") move on even when nothing happens.
        set_interval(move || self.load(), Duration::from_secs(30));
    }

    /// Reloads the list.
    pub fn load(self) {
        let mine = self.generation.get_value() + 1;
        self.generation.set_value(mine);
        spawn_local(async move {
            let result = api::pending().await;
            if self.generation.get_value() != mine {
                return;
            }
            match result {
                Ok(page) => {
                    if self.loaded.get_untracked() {
                        let known: HashSet<String> = self
                            .bundles
                            .with_untracked(|b| b.iter().map(|b| b.pending_id.clone()).collect());
                        for bundle in page
                            .bundles
                            .iter()
                            .filter(|b| !known.contains(&b.pending_id))
                        {
                            notify::arrived(bundle);
                        }
                    }
                    self.bundles.set(page.bundles);
                    self.more.set(!page.next_cursor.is_empty());
                    self.error.set(None);
                    self.loaded.set(true);
                }
                // Out of reach: the banner says so, once, for every page.
                Err(api::ApiError::Offline) => {}
                Err(e) => self.error.set(Some(e.message())),
            }
        });
    }
}

/// "(3) Clarify" in the tab, and the count on its icon.
fn show_count(count: usize, more: bool) {
    let document = document();
    let label = match (count, more) {
        (0, _) => String::new(),
        (n, false) => n.to_string(),
        (n, true) => format!("{n}+"),
    };
    document.set_title(&if label.is_empty() {
        "Clarify".to_owned()
    } else {
        format!("({label}) Clarify")
    });
    if let Ok(Some(icon)) = document.query_selector("link[rel=icon]") {
        let _ = icon.set_attribute("href", &icon_url(&label));
    }
}

/// An SVG icon: the count on amber when something waits, else a plain dot.
fn icon_url(label: &str) -> String {
    let svg = if label.is_empty() {
        "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'>\
         <circle cx='16' cy='16' r='14' fill='#1d4ed8'/></svg>"
            .to_owned()
    } else {
        let size = if label.len() > 2 { 13 } else { 18 };
        format!(
            "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'>\
             <circle cx='16' cy='16' r='16' fill='#f59e0b'/>\
             <text x='16' y='22' font-size='{size}' font-weight='bold' font-family='sans-serif' \
             text-anchor='middle' fill='#000'>{label}</text></svg>"
        )
    };
    format!(
        "data:image/svg+xml,{}",
        svg.replace('#', "%23")
            .replace('<', "%3C")
            .replace('>', "%3E")
    )
}

/// A bundle's age as a person says it: "now", "3 min", "2 h", "4 d".
pub fn age_text(seconds: i64) -> String {
    match seconds.max(0) {
        s if s < 60 => "now".to_owned(),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::{age_text, icon_url};

    #[test]
    fn ages_read_as_a_person_says_them() {
        assert_eq!(age_text(-3), "now");
        assert_eq!(age_text(59), "now");
        assert_eq!(age_text(180), "3 min");
        assert_eq!(age_text(7200), "2 h");
        assert_eq!(age_text(4 * 86_400 + 5), "4 d");
    }

    #[test]
    fn the_icon_carries_the_count_and_is_a_valid_data_url() {
        let icon = icon_url("3");
        assert!(icon.starts_with("data:image/svg+xml,%3Csvg"), "{icon}");
        assert!(icon.contains("%3E3%3C/text%3E"), "{icon}");
        assert!(!icon.contains('#') && !icon.contains('<'), "{icon}");
    }
}
