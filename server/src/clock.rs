//! Time as the database stores it (microseconds since the Unix epoch) and as
//! the API shows it (RFC 3339, UTC).

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// Now, in microseconds since the Unix epoch.
#[must_use]
pub fn now_micros() -> i64 {
    Utc::now().timestamp_micros()
}

/// A span of time in the database's unit (saturating).
#[must_use]
pub fn micros(duration: std::time::Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// `micros` as RFC 3339 in UTC with microsecond precision.
#[must_use]
pub fn rfc3339(micros: i64) -> String {
    DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Parses an RFC 3339 timestamp into microseconds since the Unix epoch.
#[must_use]
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc).timestamp_micros())
}

/// Serializes a stored time as RFC 3339.
pub(crate) fn as_rfc3339<S: Serializer>(micros: &i64, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&rfc3339(*micros))
}

/// Serializes an optional stored time as RFC 3339 or `null`.
pub(crate) fn as_rfc3339_opt<S: Serializer>(
    micros: &Option<i64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match micros {
        Some(m) => serializer.serialize_str(&rfc3339(*m)),
        None => serializer.serialize_none(),
    }
}
