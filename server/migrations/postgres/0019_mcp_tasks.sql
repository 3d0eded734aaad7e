-- Questions an agent asked as an MCP task (issue 30 item 3, the tasks
-- extension): the task is the bundle (its id is the pending_id), so this
-- row only says whose task it is, when it was made, whether the agent
-- cancelled it, and why a person declined it (the bundle's rows keep no
-- reason, R2b, and a task's answer is collected by a later poll);
-- everything else is read from the bundle, on any replica and after a
-- restart.
CREATE TABLE mcp_tasks (
    pending_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    cancelled_at BIGINT,
    reject_reason TEXT NOT NULL DEFAULT ''
);
