//! Tool arguments that name the offending argument when they don't parse
//! (L13): `limit: invalid type: floating point `2.5`, expected an integer`
//! as a tool error the model can correct, where rmcp's own reader answers
//! a protocol error that names nothing.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Visitor};

use crate::lifecycle::Error;

/// `T` read from a tool's arguments, or what was wrong with them. Reading
/// never fails, so the tool itself answers the mistake; the schema is
/// `T`'s.
#[derive(Debug)]
pub struct Checked<T>(Result<T, String>);

impl<T> Checked<T> {
    /// The arguments, or a validation error naming the argument.
    pub fn into_result(self) -> Result<T, Error> {
        self.0.map_err(Error::Invalid)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Self(
            serde_path_to_error::deserialize(value).map_err(|e| describe(&e)),
        ))
    }
}

/// `path: message`, or the message alone when the whole object is wrong.
fn describe(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    let inner = error.inner();
    if path == "." {
        inner.to_string()
    } else {
        format!("{path}: {inner}")
    }
}

impl<T: JsonSchema> JsonSchema for Checked<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}

/// Reads a JSON integer, saying "expected an integer" (not "expected i64")
/// for anything else. For `#[serde(deserialize_with)]`.
pub fn integer<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    struct Integer;
    impl Visitor<'_> for Integer {
        type Value = i64;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer")
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i64, E> {
            i64::try_from(v).map_err(|_| E::custom("is too large"))
        }
    }
    deserializer.deserialize_i64(Integer)
}

/// `limit`'s schema: its bounds as JSON Schema 2020-12 says them. schemars
/// writes `"format": "int64"`, which is no 2020-12 format: a strict
/// validator (Ajv2020) refuses the whole tool (issue 30). 0 is the
/// default page, and more than the most is clamped (L10).
pub fn limit_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "integer",
        "minimum": 0,
        "maximum": clarify_core::listing::MAX_LIMIT,
    })
}

/// `expires_in_seconds`'s schema, bounded as [`limit_schema`] is: 0 is the
/// server's default, at most a year.
pub fn expiry_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({
        "type": "integer",
        "minimum": 0,
        "maximum": crate::lifecycle::LONGEST,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    struct Args {
        cursor: String,
        #[serde(deserialize_with = "integer")]
        limit: i64,
        items: Vec<Item>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Item {
        id: String,
    }

    fn error_of(value: serde_json::Value) -> String {
        let checked: Checked<Args> = serde_json::from_value(value).unwrap();
        checked.into_result().unwrap_err().to_string()
    }

    #[test]
    fn l13_each_wrong_argument_is_named_with_what_was_expected() {
        assert_eq!(
            error_of(json!({"limit": 2.5})),
            "limit: invalid type: floating point `2.5`, expected an integer"
        );
        assert_eq!(
            error_of(json!({"limit": "x"})),
            "limit: invalid type: string \"x\", expected an integer"
        );
        assert_eq!(
            error_of(json!({"cursor": 5})),
            "cursor: invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            error_of(json!({"items": [{"id": 1}]})),
            "items[0].id: invalid type: integer `1`, expected a string"
        );
        assert!(error_of(json!({"colour": 1})).contains("unknown field `colour`"));
    }

    #[test]
    fn good_arguments_read_as_usual() {
        let checked: Checked<Args> =
            serde_json::from_value(json!({"limit": 7, "cursor": "c"})).unwrap();
        let args = checked.into_result().unwrap();
        assert_eq!((args.limit, args.cursor.as_str()), (7, "c"));
    }
}
