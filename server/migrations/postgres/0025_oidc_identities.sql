-- Sign-in with the team's OpenID provider (issue 49 item 3): a person the
-- provider vouches for is known by (issuer, sub), never by a name the
-- provider sends, which its users may choose.
CREATE TABLE oidc_identities (
    issuer      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);

-- A browser signed in through the provider holds no access token: its
-- session's token_id is NULL.
ALTER TABLE browser_sessions ALTER COLUMN token_id DROP NOT NULL;
