//! Request bodies. Unknown keys are refused where a misspelling would
//! silently change the meaning.

use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

use crate::create::NewBundle;
use crate::submission::Submission;

/// `POST /workspaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewWorkspace {
    /// Its name.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 500,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
        )
    )]
    pub name: String,
}

/// `PUT /workspaces/{id}/notify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SetWorkspaceNotify {
    /// Where the workspace's notices are POSTed (http or https); `null` or
    /// `""` stops them.
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub webhook_url: Option<String>,
    /// The Slack channel (its id, `C0123…`) the workspace's questions are
    /// posted to as well, when the server has a Slack app; absent, `null`
    /// or `""` for none. A `PUT` sets every field.
    #[serde(default)]
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 80, pattern = r"^[#A-Za-z0-9._-]*$")
    )]
    pub slack_channel: Option<String>,
    /// The Discord channel (its id, digits) the workspace's questions are
    /// posted to as well, when the server has a Discord bot (issue 48);
    /// absent, `null` or `""` for none.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 20, pattern = r"^[0-9]*$"))]
    pub discord_channel: Option<String>,
}

/// `POST /tasks`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewTask {
    /// Its workspace; none when absent or `""`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// What the task is.
    #[cfg_attr(
        feature = "openapi",
        schema(
            min_length = 1,
            max_length = 500,
            pattern = r"[^\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
        )
    )]
    pub title: String,
    /// More about it: at most 65,536 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 65536))]
    pub description: Option<String>,
    /// The project it belongs to (`clarify mcp` sends the repository's
    /// name): when given, the caller's task of that project in that
    /// workspace is answered (200) if there is one, instead of a new one
    /// (201). Under auth, a project task named without a workspace goes
    /// to the caller's personal workspace (made on first use), which no
    /// one else sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 500))]
    pub project: Option<String>,
}

/// Where a session's agent is resumed when an answer arrives after it
/// stopped waiting (DESIGN.md "resume target").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged, deny_unknown_fields)]
pub enum ResumeTarget {
    /// POST the resume as JSON to this URL.
    Webhook {
        /// An `http://` or `https://` URL.
        webhook_url: String,
    },
    /// Start this program (a full path the operator allowed) with the
    /// prompt on its standard input.
    Command {
        /// Program and arguments.
        command: Vec<String>,
    },
}

/// `POST /tasks/{id}/sessions` (the body is optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    /// Where its agent is resumed, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeTarget>,
    /// What it is, in words (the client and branch, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub description: Option<String>,
}

/// `PATCH /sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SessionPatch {
    /// The new state (one of [`crate::SessionState`]'s spellings).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::SessionState))]
    pub state: String,
}

/// `POST /clarification/request`: the agent asks (A6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ask {
    /// The session asking; the agent token's own session when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session_id: String,
    /// The agent will poll `/wait` right away: count it as attached from
    /// now, so an answer given before its first poll reaches it directly.
    #[serde(default, skip_serializing_if = "core::ops::Not::not")]
    pub attach: bool,
    /// Seconds until the question expires unanswered (status `expired`);
    /// the server's `--question-ttl` when absent, else never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 31_536_000))]
    pub expires_in_seconds: Option<u64>,
    /// The questions.
    #[serde(flatten)]
    pub bundle: NewBundle,
}

/// `POST /auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Login {
    /// A personal access token.
    pub token: String,
}

/// `POST /clarification/{id}/assign`: who the bundle is for (issue 29
/// item 6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Assign {
    /// A user name, trimmed; `""` for nobody in particular. At most 64
    /// characters as sent, none a control character.
    #[cfg_attr(
        feature = "openapi",
        schema(max_length = 64, pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")
    )]
    pub assignee: String,
}

/// `POST /clarification/respond-alike`: one answer for bundles that ask the
/// same thing (issue 29 item 5). Each is settled through its own claim, so
/// one already answered elsewhere keeps its winner.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RespondAlike {
    /// The bundles, 1 to 50, each once, all alike (the same
    /// `similar_key`, the same questions and options).
    /// (`uniqueItems`, which utoipa cannot say, is set by the server's
    /// document.)
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 50))]
    pub pending_ids: Vec<String>,
    /// The answer (or rejection) each of them gets, as
    /// `POST /clarification/{id}/respond` takes it.
    pub response: Submission,
}
