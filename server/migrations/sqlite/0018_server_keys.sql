-- Keys the server signs with (issue 30: the MCP requestState of a form
-- answered in an MCP client), made once and shared by every replica, so
-- a state one replica sealed opens on any other and after a restart.
CREATE TABLE server_keys (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
