-- Every attempt to resolve a bundle after the winner (claimed: false, or
-- 409), with who made it and how, so that a race can be explained after
-- the fact (GET /clarification/{id}/attempts). The winner's own provenance
-- is in its messages' metadata (`answered_by`), written by the claim.
CREATE TABLE clarification_attempts (
    id          TEXT PRIMARY KEY,
    pending_id  TEXT NOT NULL,
    user_name   TEXT NOT NULL,
    channel     TEXT NOT NULL,
    client      TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX clarification_attempts_by_bundle ON clarification_attempts (pending_id, created_at);
