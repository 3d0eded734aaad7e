//! What Slack says over a Socket Mode connection (issue 48 item 1), read
//! from its JSON text frames: `hello` once connected, an envelope to
//! acknowledge with its `envelope_id` (an `interactive` one carries a
//! press), and `disconnect` when Slack is about to close the connection.

use serde_json::{Value, json};

/// Why Slack is closing a connection (`disconnect`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    /// `warning` or `refresh_requested`: the connection is refreshed soon;
    /// open the next one before this one goes.
    Refresh,
    /// `link_disabled` (Socket Mode was turned off for the app) or a reason
    /// Slack added since: nothing to open the next connection for at once.
    Other,
}

/// One frame from Slack.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Frame {
    /// The connection is ready.
    Hello,
    /// Slack will close the connection.
    Disconnect(Reason),
    /// Something to acknowledge: `kind` is the envelope's `type`
    /// (`interactive`, `events_api`, `slash_commands`).
    Envelope {
        /// Acknowledged with `{"envelope_id": id}`.
        id: String,
        /// The envelope's `type`.
        kind: String,
        /// What it carries (an interaction's payload).
        payload: Value,
    },
    /// Anything else: not JSON, or no type known here.
    Other,
}

impl Frame {
    /// The frame a text message is.
    pub(super) fn read(text: &str) -> Self {
        let Ok(mut value) = serde_json::from_str::<Value>(text) else {
            return Self::Other;
        };
        if let Some(id) = value["envelope_id"].as_str().filter(|id| !id.is_empty()) {
            return Self::Envelope {
                id: id.to_owned(),
                kind: value["type"].as_str().unwrap_or_default().to_owned(),
                payload: value["payload"].take(),
            };
        }
        match value["type"].as_str() {
            Some("hello") => Self::Hello,
            Some("disconnect") => Self::Disconnect(match value["reason"].as_str() {
                Some("warning" | "refresh_requested") => Reason::Refresh,
                _ => Reason::Other,
            }),
            _ => Self::Other,
        }
    }
}

/// The acknowledgement of envelope `id`.
pub(super) fn ack(id: &str) -> String {
    json!({ "envelope_id": id }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slacks_frames_are_read_as_documented() {
        assert_eq!(
            Frame::read(
                r#"{"type":"hello","num_connections":1,"connection_info":{"app_id":"A1"}}"#
            ),
            Frame::Hello
        );
        for (reason, read) in [
            ("warning", Reason::Refresh),
            ("refresh_requested", Reason::Refresh),
            ("link_disabled", Reason::Other),
        ] {
            let text = json!({"type": "disconnect", "reason": reason, "debug_info": {"host": "h"}});
            assert_eq!(Frame::read(&text.to_string()), Frame::Disconnect(read));
        }
        let envelope = json!({"envelope_id": "e1", "type": "interactive",
            "payload": {"type": "block_actions"}, "accepts_response_payload": false,
            "retry_attempt": 0, "retry_reason": ""});
        assert_eq!(
            Frame::read(&envelope.to_string()),
            Frame::Envelope {
                id: "e1".into(),
                kind: "interactive".into(),
                payload: json!({"type": "block_actions"})
            }
        );
        assert_eq!(Frame::read("not json"), Frame::Other);
        assert_eq!(Frame::read(r#"{"type":"events_api"}"#), Frame::Other);
        assert_eq!(ack("e1"), r#"{"envelope_id":"e1"}"#);
    }
}
