//! Field paths that name the offending input in every validation message.

use alloc::string::String;
use core::fmt;

/// A path into a request body, rendered as `answers[1].selected_options[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// A top-level field such as `answers` or `reject_reason`.
    #[must_use]
    pub fn root(name: &str) -> Self {
        Self(String::from(name))
    }

    /// The element `index` of this array field.
    #[must_use]
    pub fn at(mut self, index: usize) -> Self {
        use fmt::Write as _;
        let _ = write!(self.0, "[{index}]");
        self
    }

    /// The member `name` of this object field.
    #[must_use]
    pub fn dot(mut self, name: &str) -> Self {
        self.0.push('.');
        self.0.push_str(name);
        self
    }

    /// The path as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn renders_nested_paths() {
        let path = FieldPath::root("answers")
            .at(1)
            .dot("selected_options")
            .at(0);
        assert_eq!(path.to_string(), "answers[1].selected_options[0]");
    }
}
