//! Rune counting: the one length rule shared by server and browser (N8b, W4a).
//!
//! A "rune" is a Unicode scalar value (Go's rune, Rust's `char`). Counting
//! bytes would cut non-Latin text short; counting UTF-16 units (what the
//! browser's `maxLength` does) would charge two for every emoji.

/// The most runes a `custom_text` or `reject_reason` may hold (N8b).
pub const MAX_TEXT_RUNES: usize = 2000;

/// Counts the Unicode scalar values in `text`.
#[must_use]
pub fn rune_count(text: &str) -> usize {
    text.chars().count()
}

/// True when `text` is longer than [`MAX_TEXT_RUNES`], judged on the raw
/// input before any trimming (N3a rule 3).
#[must_use]
pub fn exceeds_text_limit(text: &str) -> bool {
    // `nth` stops at the first rune past the limit instead of counting a
    // megabyte-long body to the end.
    text.chars().nth(MAX_TEXT_RUNES).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    #[test]
    fn counts_scalar_values_not_bytes_or_utf16_units() {
        assert_eq!(rune_count(""), 0);
        assert_eq!(rune_count("abc"), 3);
        assert_eq!(rune_count("本"), 1); // 3 bytes in UTF-8
        assert_eq!(rune_count("😀"), 1); // 4 bytes, 2 UTF-16 units
        assert_eq!(rune_count("e\u{301}"), 2); // one grapheme, two runes
    }

    #[test]
    fn limit_is_inclusive_at_2000() {
        let at: String = "本".repeat(MAX_TEXT_RUNES);
        let over: String = "😀".repeat(MAX_TEXT_RUNES + 1);
        assert!(!exceeds_text_limit(&at));
        assert!(exceeds_text_limit(&over));
    }
}
