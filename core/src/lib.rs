//! Clarify's rules, shared by the server and the browser.
//!
//! Everything that decides whether a clarification request or an answer is
//! valid lives here, with no I/O, clock or randomness, so the same code runs
//! in the `clarify` server and, compiled to wasm, in the browser overlay: the
//! two can never disagree about what is valid.
//!
//! - [`create`]: a new bundle of 1–4 questions, ids assigned.
//! - [`validate`]: an answer or rejection checked (N6–N8b, L16) and
//!   normalized (N3a) into an [`Outcome`].
//! - [`envelope`]: the R12 response envelope and the R10 bodies.
//! - [`stored`]: the durable message shape, D2 ordering, R2b winner replay.
//! - [`listing`]: the L3/L4/L11 list shapes, cursor and limit rules.
//! - [`runes`]: the 2000-rune limit counted over code points (N8b, W4a).
//! - [`agent_text`]: what the agent is told.
//! - [`api`]: every REST body and event, for the server and its clients.
//! - [`session`], [`status`], [`event`]: the vocabulary — session states and
//!   the one pending-action rule (T1), bundle statuses (D3), event kinds.
//!
//! The crate is `no_std` with `alloc` when built without its default `std`
//! feature; the `wasm` feature exports the rules to JavaScript.
//!
//! # Example
//!
//! ```
//! use clarify_core::{NewBundle, Submission, Status, validate_new_bundle, validate_submission};
//!
//! let bundle: NewBundle = serde_json::from_str(r#"{
//!     "questions": [{"prompt": "Which database?",
//!                    "options": [{"label": "SQLite"}, {"label": "PostgreSQL"}]}]
//! }"#).unwrap();
//! let spec = validate_new_bundle(&bundle).unwrap();
//! assert_eq!(spec.questions[0].options[1].option_id, "q1_opt2");
//!
//! let answer: Submission = serde_json::from_str(r#"{
//!     "answers": [{"question_id": "q1", "selected_options": ["q1_opt2", "q1_opt2"],
//!                  "custom_text": "  for the replicas  "}]
//! }"#).unwrap();
//! let outcome = validate_submission(&spec.questions, &answer).unwrap();
//! assert_eq!(outcome.status(), Status::Answered);
//!
//! let response = outcome.to_response("p-1", "2026-11-30T09:00:00Z");
//! assert_eq!(
//!     serde_json::to_string(&response).unwrap(),
//!     r#"{"pending_id":"p-1","answers":[{"question_id":"q1","selected_options":["q1_opt2"],"custom_text":"for the replicas"}],"rejected":false,"reject_reason":"","responded_at":"2026-11-30T09:00:00Z"}"#
//! );
//! ```
#![cfg_attr(not(feature = "std"), no_std)]

extern crate alloc;

pub mod agent_text;
pub mod alike;
pub mod api;
pub mod approval;
pub mod create;
pub mod delivery;
pub mod envelope;
pub mod event;
pub mod field;
pub mod id;
pub mod listing;
pub mod metadata_key;
pub mod name;
pub mod provenance;
pub mod question;
pub mod runes;
mod serde_util;
pub mod session;
pub mod status;
pub mod stored;
pub mod submission;
pub mod validate;
pub mod view_status;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use approval::{BundleKind, ToolCall};
pub use create::{BundleSpec, CreateError, NewBundle, NewOption, NewQuestion, validate_new_bundle};
pub use envelope::{Answer, ErrorBody, RespondBody, Response};
pub use event::{EventKind, MessageKind};
pub use field::FieldPath;
pub use id::{PendingId, SessionId, TaskId, TurnId, UserId, WorkspaceId};
pub use listing::{Cursor, ListError, ListedQuestion, PendingBundle, PendingPage};
pub use name::{MAX_DESCRIPTION, Name, NameError, check_description};
pub use provenance::{
    ANONYMOUS, AnsweredBy, Attempt, Attempts, Channel, MAX_CLIENT_NAME, client_name,
};
pub use question::{Question, QuestionOption};
pub use runes::{MAX_TEXT_RUNES, exceeds_text_limit, rune_count};
pub use session::{PendingAction, SessionState, pending_action};
pub use status::{BundleStatus, Status};
pub use stored::{ClarificationMetadata, StoredMessage, Winner, sort_d2, winner};
pub use submission::{AnswerInput, ConflictingReasons, Submission};
pub use validate::{Outcome, SubmissionError, validate_submission};
pub use view_status::ViewStatus;
