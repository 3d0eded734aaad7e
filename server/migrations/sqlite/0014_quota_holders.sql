-- Fair share (issue 26, item 5): caps count users, not credentials. A
-- session records the user whose request created it ('' when auth is off,
-- or for sessions older than this), so its agent token counts against
-- that user; an MCP session records whose quota it counts against.
ALTER TABLE task_sessions ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
CREATE INDEX task_sessions_created_by ON task_sessions (created_by, state);
ALTER TABLE mcp_session_owners ADD COLUMN holder TEXT NOT NULL DEFAULT '';
CREATE INDEX mcp_session_owners_holder ON mcp_session_owners (holder, last_seen);
-- A user's browser logins are bounded: each login trims that user's
-- expired and oldest ones.
CREATE INDEX browser_sessions_user ON browser_sessions (user_id, created_at);
