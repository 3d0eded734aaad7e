-- Sign-in with the team's OpenID provider (issue 49 item 3): a person the
-- provider vouches for is known by (issuer, sub), never by a name the
-- provider sends, which its users may choose.
CREATE TABLE oidc_identities (
    issuer      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
);

-- A browser signed in through the provider holds no access token: its
-- session's token_id is NULL. SQLite cannot drop a NOT NULL, so the table
-- is made again (nothing references it).
CREATE TABLE browser_sessions_0025 (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_id      TEXT REFERENCES access_tokens (id) ON DELETE CASCADE,
    secret_hash   TEXT NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
INSERT INTO browser_sessions_0025 (id, user_id, token_id, secret_hash, created_at, expires_at)
    SELECT id, user_id, token_id, secret_hash, created_at, expires_at FROM browser_sessions;
DROP TABLE browser_sessions;
ALTER TABLE browser_sessions_0025 RENAME TO browser_sessions;
CREATE INDEX browser_sessions_user ON browser_sessions (user_id, created_at);
