-- When each MCP session was last used, so that an identity's live sessions
-- can be counted (and capped) and idle ones forgotten.
ALTER TABLE mcp_session_owners ADD COLUMN last_seen INTEGER NOT NULL DEFAULT 0;
CREATE INDEX mcp_session_owners_owner ON mcp_session_owners (owner, last_seen);
