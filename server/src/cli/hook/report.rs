//! The hooks that tell rather than ask: `PostToolUse` of
//! `AskUserQuestion` reports what the person chose in the agent's own
//! dialog, which settles the bundle through the one claim with channel
//! `terminal` (the server takes that channel from the asking agent's
//! session only); `SessionEnd` ends the Clarify session, so its open
//! questions leave everyone's inbox.

use serde_json::json;

use super::{Hook, Quiet, questions};
use crate::client::error_text;

impl Hook {
    /// Settles the bundle the `PreToolUse` of this call asked with what
    /// was chosen at the terminal. An answer from elsewhere that won
    /// first stands (the agent already had it).
    pub(super) async fn report_terminal(&self, payload: &super::Payload) -> Result<(), Quiet> {
        let keys = super::state::keys(payload);
        let held = self.held(&payload.session_id)?;
        let record = held.read();
        drop(held);
        // None when the hook answered it (Claude Code reports that answer
        // too) or nothing was asked: nothing to settle.
        let Some(pending_id) = keys.iter().find_map(|k| record.asked.get(k)) else {
            return Ok(());
        };
        let submission = questions::submission(&payload.tool_input, &payload.tool_response)
            .ok_or_else(|| Quiet("the PostToolUse report holds no answers".into()))?;
        let agent = crate::client::Client::new(&self.server, Some(record.agent_token.clone()))
            .at_the_terminal();
        let path = format!("/clarification/{pending_id}/respond");
        let reply = agent.post(&path, &submission).await.map_err(Quiet)?;
        self.forget(&payload.session_id, &keys);
        match reply.0 {
            200 => Ok(()),
            // Closed meanwhile (expired, the session ended): nothing to do.
            409 => Ok(()),
            _ => Err(Quiet(format!(
                "the terminal's answer was not recorded: {}",
                error_text(&reply)
            ))),
        }
    }

    /// Ends the conversation's Clarify session and forgets it.
    pub(super) async fn end_session(&self, payload: &super::Payload) -> Result<(), Quiet> {
        let held = self.held(&payload.session_id)?;
        let record = held.read();
        held.remove();
        if record.session_id.is_empty() {
            return Ok(());
        }
        let patch = json!({"state": clarify_core::SessionState::Completed.as_str()});
        let path = format!("/sessions/{}", record.session_id);
        let reply = self
            .user()
            .send(reqwest::Method::PATCH, &path, Some(&patch))
            .await
            .map_err(Quiet)?;
        match reply.0 {
            200 => Ok(()),
            _ => Err(Quiet(format!(
                "the session was not ended: {}",
                error_text(&reply)
            ))),
        }
    }
}
