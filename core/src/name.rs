//! Names and titles (a workspace's name, a task's title): trimmed,
//! non-empty, at most [`MAX_NAME`] characters. A [`Name`] can only hold one
//! that is, so whoever has one need not check again.

use alloc::string::String;
use core::fmt;

use crate::runes::rune_count;

/// The longest name or title, in characters (runes).
pub const MAX_NAME: usize = 500;

/// The longest description (a task's), in characters (runes): 64 Ki.
pub const MAX_DESCRIPTION: usize = 65_536;

/// A valid name: trimmed, not empty, at most [`MAX_NAME`] characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name(String);

/// Why a text is not a name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// Nothing but white space.
    #[error("{0}: is required")]
    Empty(&'static str),
    /// More than [`MAX_NAME`] characters as sent (the contract's
    /// `maxLength` counts them before the trim).
    #[error("{0}: is longer than 500 characters")]
    TooLong(&'static str),
    /// A description of more than [`MAX_DESCRIPTION`] characters.
    #[error("{0}: is longer than 65536 characters")]
    DescriptionTooLong(&'static str),
}

/// Checks `text` as the description in `field`: any text (empty too) of at
/// most [`MAX_DESCRIPTION`] characters.
///
/// # Errors
/// [`NameError::DescriptionTooLong`] naming `field`.
pub fn check_description(field: &'static str, text: &str) -> Result<(), NameError> {
    if rune_count(text) > MAX_DESCRIPTION {
        return Err(NameError::DescriptionTooLong(field));
    }
    Ok(())
}

impl Name {
    /// `text` as the name in `field`, trimmed.
    ///
    /// # Errors
    /// A [`NameError`] naming `field`.
    pub fn parse(field: &'static str, text: &str) -> Result<Self, NameError> {
        // Judged as sent, as the contract's `maxLength` states it: a long
        // run of white space around a short name is still too long.
        if rune_count(text) > MAX_NAME {
            return Err(NameError::TooLong(field));
        }
        let text = text.trim();
        if text.is_empty() {
            return Err(NameError::Empty(field));
        }
        Ok(Self(String::from(text)))
    }

    /// The name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name, owned.
    #[must_use]
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_trimmed_required_and_bounded_in_characters() {
        assert_eq!(
            Name::parse("title", "  Ship it ").unwrap().as_str(),
            "Ship it"
        );
        assert_eq!(Name::parse("title", " \n "), Err(NameError::Empty("title")));
        let long: String = "é".repeat(MAX_NAME);
        assert!(Name::parse("name", &long).is_ok(), "characters, not bytes");
        let longer: String = "é".repeat(MAX_NAME + 1);
        let error = Name::parse("name", &longer).unwrap_err();
        assert_eq!(error.to_string(), "name: is longer than 500 characters");
        // Schemathesis, seed 1769343864569913074 (auth on): two characters
        // and 499 tabs were taken as a two-character name.
        let padded = format!("\u{1c}ç{}", "\t".repeat(MAX_NAME - 1));
        assert_eq!(
            Name::parse("name", &padded),
            Err(NameError::TooLong("name"))
        );
    }

    #[test]
    fn a_description_is_bounded_by_characters_not_bytes() {
        let most: String = core::iter::repeat_n('é', MAX_DESCRIPTION).collect();
        assert_eq!(check_description("description", &most), Ok(()));
        assert_eq!(check_description("description", ""), Ok(()));
        let over = alloc::format!("{most}x");
        let error = check_description("description", &over).unwrap_err();
        assert_eq!(
            error.to_string(),
            "description: is longer than 65536 characters"
        );
    }
}
