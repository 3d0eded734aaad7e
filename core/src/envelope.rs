//! The response envelope every answering surface returns (R10, R12).
//!
//! Serde emits every field of these structs; none is skipped when empty, so a
//! rejection still carries `"answers": []` and an answer `"rejected": false`.
//! That is R12's guarantee, and the tests assert it on the serialized text.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};

use crate::serde_util::null_as_default;
use crate::status::Status;

/// One normalized answer (N3a): options in position order, text trimmed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Answer {
    /// The question answered.
    #[serde(default, deserialize_with = "null_as_default")]
    pub question_id: String,
    /// The chosen option ids; `[]` when none.
    #[serde(default, deserialize_with = "null_as_default")]
    pub selected_options: Vec<String>,
    /// Free text; `""` when none.
    #[serde(default, deserialize_with = "null_as_default")]
    pub custom_text: String,
}

/// The resolution of a bundle as every surface reports it (R12).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Response {
    /// The bundle resolved.
    pub pending_id: String,
    /// The answers in bundle order; `[]` on a rejection.
    pub answers: Vec<Answer>,
    /// Whether the bundle was declined.
    pub rejected: bool,
    /// Why it was declined; `""` when not given, and on every replay (R2b).
    pub reject_reason: String,
    /// When it was resolved (RFC 3339, UTC).
    pub responded_at: String,
}

/// The body of a successful `POST /clarification/{id}/respond` (R10, R11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RespondBody {
    /// Always `true`; kept for clients that only check it (R11).
    pub success: bool,
    /// `true` for the winner, `false` for a caller told the winner's answer.
    pub claimed: bool,
    /// The winner's terminal status: `answered` or `rejected`.
    pub status: Status,
    /// The winner's response.
    pub response: Response,
}

impl RespondBody {
    /// The body for a caller that won (`claimed`) or lost to `response`.
    #[must_use]
    pub fn new(claimed: bool, status: Status, response: Response) -> Self {
        Self {
            success: true,
            claimed,
            status,
            response,
        }
    }
}

/// The body of every error answer: `{"error": "<message naming the field>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// A human message; never internal error text.
    pub error: String,
}
