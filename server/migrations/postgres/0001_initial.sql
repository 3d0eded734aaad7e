-- Clarify's schema (PostgreSQL), the twin of ../sqlite/0001_initial.sql.
-- Times are microseconds since the Unix epoch. Clarification state lives in
-- task_session_messages.metadata (JSON text, as on SQLite, so both backends
-- read and write the same strings); the generated columns below only index
-- it, they are never written.

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    owner_id    TEXT NOT NULL DEFAULT '',
    created_at  BIGINT NOT NULL
);
CREATE INDEX workspaces_owner ON workspaces (owner_id);

-- workspace_id has no foreign key: '' means "no workspace" and a dangling
-- reference stays visible (D5, L1c).
CREATE TABLE tasks (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL DEFAULT '',
    title         TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX tasks_workspace ON tasks (workspace_id, created_at);

CREATE TABLE task_sessions (
    id                TEXT PRIMARY KEY,
    task_id           TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    state             TEXT NOT NULL,
    agent_token_hash  TEXT NOT NULL UNIQUE,
    resume_target     TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE INDEX task_sessions_task ON task_sessions (task_id, created_at);

CREATE TABLE task_session_turns (
    id               TEXT PRIMARY KEY,
    task_session_id  TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    started_at       BIGINT NOT NULL,
    completed_at     BIGINT,
    created_at       BIGINT NOT NULL
);
-- The current turn: newest by (started_at, created_at, id) per session.
CREATE INDEX task_session_turns_current
    ON task_session_turns (task_session_id, started_at DESC, created_at DESC, id DESC);

-- STORED, not VIRTUAL: PostgreSQL 15 has only stored generated columns.
-- `->>` yields NULL for a missing key, as SQLite's json_extract does.
CREATE TABLE task_session_messages (
    id               TEXT PRIMARY KEY,
    task_session_id  TEXT NOT NULL REFERENCES task_sessions (id) ON DELETE CASCADE,
    task_id          TEXT NOT NULL DEFAULT '',
    turn_id          TEXT NOT NULL DEFAULT '',
    type             TEXT NOT NULL,
    content          TEXT NOT NULL DEFAULT '',
    metadata         TEXT NOT NULL DEFAULT '{}',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    pending_id       TEXT GENERATED ALWAYS AS (metadata::jsonb ->> 'pending_id') STORED,
    clarification_status TEXT
        GENERATED ALWAYS AS (coalesce(metadata::jsonb ->> 'status', '')) STORED,
    clarification_question_id TEXT
        GENERATED ALWAYS AS (coalesce(metadata::jsonb ->> 'question_id', '')) STORED
);
CREATE INDEX task_session_messages_session ON task_session_messages (task_session_id, created_at, id);
-- A bundle by pending_id, without scanning the history.
CREATE INDEX task_session_messages_pending_id
    ON task_session_messages (pending_id) WHERE type = 'clarification_request';
-- Pending questions only: the list and the projections stay flat as
-- answered history grows.
CREATE INDEX task_session_messages_open
    ON task_session_messages (created_at, pending_id)
    WHERE type = 'clarification_request' AND clarification_status IN ('', 'pending');
CREATE INDEX task_session_messages_open_by_turn
    ON task_session_messages (turn_id)
    WHERE type = 'clarification_request' AND clarification_status IN ('', 'pending');
