-- Opt-in authentication: users, their personal access tokens and browser
-- sessions. Secrets are stored only as SHA-256 hashes.

CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL
);

CREATE TABLE access_tokens (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash    TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    revoked_at    BIGINT,
    last_used_at  BIGINT
);
CREATE INDEX access_tokens_user ON access_tokens (user_id);

-- A browser logged in with a token gets a cookie naming one of these.
CREATE TABLE browser_sessions (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_id      TEXT NOT NULL REFERENCES access_tokens (id) ON DELETE CASCADE,
    secret_hash   TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
