-- Answer links (issue 28): each is one option of one bundle, carried by
-- one notice target. Only the token's hash is kept; the token itself
-- lives in the notice that was sent.
CREATE TABLE answer_links (
    token_hash TEXT PRIMARY KEY,
    pending_id TEXT NOT NULL,
    option_id TEXT NOT NULL,
    client TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX answer_links_pending ON answer_links (pending_id);
