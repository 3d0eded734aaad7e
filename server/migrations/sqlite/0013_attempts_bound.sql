-- Fair share (issue 26): a bundle's attempts log keeps its first 100
-- losing attempts; the rest are only counted here, so that no caller can
-- grow it without bound.
CREATE TABLE clarification_attempts_unlogged (
    pending_id  TEXT PRIMARY KEY,
    count       BIGINT NOT NULL
);
