//! Which live events a reader may see (the WebSocket and the pending
//! stream): the API's task visibility (L1c), so nobody is told of another
//! user's questions or answers; an agent token only its own session's.

use std::collections::HashMap;

use crate::auth::{self, Caller};
use crate::events::Event;
use crate::state::AppState;

/// Tasks remembered per reader before the memory starts over.
const VISIBILITY_CACHE: usize = 4096;

/// Which events one socket may see, remembered per task: visibility of a
/// task never changes (tasks do not move between workspaces, workspaces do
/// not change owners), so each task costs one query per socket at most.
pub struct Visibility {
    caller: Caller,
    tasks: HashMap<String, bool>,
}

impl Visibility {
    /// Nothing remembered yet.
    #[must_use]
    pub fn new(caller: Caller) -> Self {
        Self {
            caller,
            tasks: HashMap::new(),
        }
    }

    /// Whether the caller may see `event`: the same task visibility as the
    /// API, so nobody receives another user's questions or answers; and an
    /// agent token only its own session's events, never a sibling
    /// session's.
    pub async fn admits(&mut self, state: &AppState, event: &Event) -> bool {
        match &self.caller {
            _ if self.caller.sees_everything() => true,
            Caller::Unscoped => true,
            Caller::Agent(agent) => event.payload.session_id() == Some(agent.session_id.as_str()),
            Caller::User(_) => {
                let task_id = event.payload.task_id().unwrap_or_default();
                if let Some(known) = self.tasks.get(task_id) {
                    return *known;
                }
                let Ok(visible) = auth::may_access_task(state.db(), &self.caller, task_id).await
                else {
                    // Unknown, not remembered: asked again next time.
                    return false;
                };
                if self.tasks.len() >= VISIBILITY_CACHE {
                    self.tasks.clear();
                }
                self.tasks.insert(task_id.to_owned(), visible);
                visible
            }
        }
    }
}
