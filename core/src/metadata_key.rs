//! The key names of a `clarification_request` message's stored metadata,
//! written once: [`crate::stored`] reads and writes them, and the server's
//! SQL builders (the claim, the delivery marks, detach) name them from
//! here, so a renamed key cannot leave a statement writing the old one.

/// The bundle the question belongs to.
pub const PENDING_ID: &str = "pending_id";
/// The question's id.
pub const QUESTION_ID: &str = "question_id";
/// The question as asked.
pub const QUESTION: &str = "question";
/// Position in the bundle (D2).
pub const QUESTION_INDEX: &str = "question_index";
/// Number of questions in the bundle.
pub const QUESTION_TOTAL: &str = "question_total";
/// Context shared by the bundle's questions.
pub const CONTEXT: &str = "context";
/// The stored status (D3).
pub const STATUS: &str = "status";
/// The answer the claim wrote.
pub const RESPONSE: &str = "response";
/// The agent stopped waiting.
pub const AGENT_DISCONNECTED: &str = "agent_disconnected";
/// Claimed, delivery not yet confirmed (R6).
pub const RESPONSE_DELIVERY_PENDING: &str = "response_delivery_pending";
/// A resume dispatch was started for this claim.
pub const RESUME_ATTEMPTED: &str = "resume_attempted";
/// Kept for the agent to collect.
pub const AWAITING_PICKUP: &str = "awaiting_pickup";
/// Who resolved it and how.
pub const ANSWERED_BY: &str = "answered_by";
/// When it expires unanswered.
pub const EXPIRES_AT: &str = "expires_at";

/// Who the bundle is for (issue 29 item 6).
pub const ASSIGNEE: &str = "assignee";

/// An approval's tool call (issue 47); absent for a question.
pub const TOOL_CALL: &str = "tool_call";

/// Every key [`crate::ClarificationMetadata`] reads into its own fields.
pub const ALL: [&str; 16] = [
    ASSIGNEE,
    TOOL_CALL,
    PENDING_ID,
    QUESTION_ID,
    QUESTION,
    QUESTION_INDEX,
    QUESTION_TOTAL,
    CONTEXT,
    STATUS,
    RESPONSE,
    AGENT_DISCONNECTED,
    RESPONSE_DELIVERY_PENDING,
    RESUME_ATTEMPTED,
    AWAITING_PICKUP,
    ANSWERED_BY,
    EXPIRES_AT,
];
