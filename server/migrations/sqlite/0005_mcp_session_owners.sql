-- Who opened each MCP session: a session id is bound to the identity that
-- created it, so a leaked or guessed id is useless under another token.
-- Keyed by a hash of the surface and the session id (never the id itself).
CREATE TABLE mcp_session_owners (
    session_hash  TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    created_at    INTEGER NOT NULL
);
CREATE INDEX mcp_session_owners_created ON mcp_session_owners (created_at);
