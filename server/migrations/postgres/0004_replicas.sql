-- Coordination between replicas sharing this database. PostgreSQL only:
-- SQLite serves one process, whose memory already knows all of this.

-- Bundles an agent is blocked on, on whichever replica: the replica holding
-- the waiter keeps `attached_until` ahead of the clock while the agent waits
-- and for the grace period after, so an answer given through another
-- replica is delivered live instead of resuming the agent (R7).
CREATE TABLE clarification_attachments (
    pending_id      TEXT PRIMARY KEY,
    attached_until  BIGINT NOT NULL
);
CREATE INDEX clarification_attachments_until ON clarification_attachments (attached_until);

-- Messages from one replica to the others (browser events, waiter wakes).
-- NOTIFY announces a row by id: its payload is capped at 8000 bytes, an
-- event is not. Rows are deleted once every listener has long had them.
CREATE TABLE replica_messages (
    id          BIGSERIAL PRIMARY KEY,
    origin      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX replica_messages_created ON replica_messages (created_at);

-- MCP sessions (the client's `initialize` parameters), so a client whose
-- next request a load balancer sends to another replica carries on there
-- without initializing again.
CREATE TABLE mcp_sessions (
    id          TEXT PRIMARY KEY,
    state       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_created ON mcp_sessions (created_at);
