//! Deserialization helpers for lenient input shapes.

use serde::{Deserialize, Deserializer};

/// Reads an explicit JSON `null` the same as an absent key.
///
/// Clients built on languages with nullable fields send `null` for "not
/// given"; refusing it would reject meaningful requests over a formality.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}
