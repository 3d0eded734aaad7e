//! What a key pressed in the overlay does (keyboard-first, W2): Escape
//! folds it away, Ctrl+Enter submits, Enter in the text box moves on (Shift
//! for a newline), arrows move between cards, a number picks an option.

/// A key as the overlay reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pressed {
    /// `KeyboardEvent.key`.
    pub key: String,
    /// Ctrl or Cmd held.
    pub modifier: bool,
    /// Alt held.
    pub alt: bool,
    /// Shift held.
    pub shift: bool,
    /// Pressed in the free-text box, where letters and digits are words.
    pub in_text: bool,
}

/// What to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    /// Fold the overlay away; nothing is sent.
    Collapse,
    /// Submit, if the answers allow.
    Submit,
    /// Show card `0`; `1`: focus its text box.
    Card(usize, bool),
    /// Pick the option numbered so (1-based) on the card shown.
    Option(usize),
    /// Nothing: the key does what it does anywhere.
    None,
}

/// The action of `pressed` on card `step` of `count`.
pub(super) fn action(pressed: &Pressed, step: usize, count: usize) -> Action {
    match pressed.key.as_str() {
        "Escape" => Action::Collapse,
        "Enter" if pressed.modifier => Action::Submit,
        "Enter" if pressed.in_text && !pressed.shift => {
            if step + 1 < count {
                Action::Card(step + 1, true)
            } else {
                Action::Submit
            }
        }
        "ArrowLeft" if !pressed.in_text => Action::Card(step.saturating_sub(1), false),
        "ArrowRight" if !pressed.in_text && step + 1 < count => Action::Card(step + 1, false),
        digit if !pressed.in_text && !pressed.modifier && !pressed.alt => digit
            .parse::<usize>()
            .ok()
            .filter(|n| *n >= 1)
            .map_or(Action::None, Action::Option),
        _ => Action::None,
    }
}

#[cfg(test)]
mod tests {
    use super::{Action, Pressed, action};

    fn key(key: &str, in_text: bool) -> Pressed {
        Pressed {
            key: key.into(),
            modifier: false,
            alt: false,
            shift: false,
            in_text,
        }
    }

    #[test]
    fn keys_do_what_the_hint_says() {
        assert_eq!(action(&key("Escape", true), 0, 2), Action::Collapse);
        assert_eq!(action(&key("3", false), 0, 2), Action::Option(3));
        assert_eq!(
            action(&key("3", true), 0, 2),
            Action::None,
            "a digit typed is a digit"
        );
        assert_eq!(action(&key("0", false), 0, 2), Action::None);
        assert_eq!(
            action(&key("ArrowRight", false), 0, 2),
            Action::Card(1, false)
        );
        assert_eq!(action(&key("ArrowRight", false), 1, 2), Action::None);
        assert_eq!(
            action(&key("ArrowLeft", false), 0, 2),
            Action::Card(0, false)
        );
        assert_eq!(action(&key("Enter", true), 0, 2), Action::Card(1, true));
        assert_eq!(action(&key("Enter", true), 1, 2), Action::Submit);
        let newline = Pressed {
            shift: true,
            ..key("Enter", true)
        };
        assert_eq!(
            action(&newline, 0, 2),
            Action::None,
            "Shift+Enter is a newline"
        );
        let submit = Pressed {
            modifier: true,
            ..key("Enter", false)
        };
        assert_eq!(action(&submit, 0, 2), Action::Submit);
        let alt = Pressed {
            alt: true,
            ..key("2", false)
        };
        assert_eq!(action(&alt, 0, 2), Action::None);
    }
}
