//! Ids as newtypes: a pending id, a session id and a task id are all text
//! on the wire, but a function that takes one cannot be handed another.
//! Each is `#[serde(transparent)]` (the wire is unchanged) and reads as
//! `&str` where text is wanted; making one from text is explicit.

use alloc::string::String;
use core::borrow::Borrow;
use core::fmt;
use core::ops::Deref;

use serde::{Deserialize, Serialize};

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id `text` names.
            #[must_use]
            pub fn new(text: impl Into<String>) -> Self {
                Self(text.into())
            }

            /// The id as text.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as owned text.
            #[must_use]
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                Self(text)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self(text.into())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

id! {
    /// A bundle's id (`pending_id`).
    PendingId
}
id! {
    /// A task session's id: the agent's token belongs to one.
    SessionId
}
id! {
    /// A task's id.
    TaskId
}
id! {
    /// A turn of a session.
    TurnId
}
id! {
    /// A workspace's id.
    WorkspaceId
}
id! {
    /// A user's id.
    UserId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_is_plain_text() {
        let id = PendingId::new("p1");
        assert_eq!(serde_json::to_value(&id).unwrap(), "p1");
        let back: PendingId = serde_json::from_value(serde_json::json!("p1")).unwrap();
        assert_eq!(back, id);
        assert_eq!(back, "p1");
        assert_eq!(back.len(), 2, "reads as &str");
    }
}
