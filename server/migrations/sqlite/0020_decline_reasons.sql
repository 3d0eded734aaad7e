-- Why a person declined a bundle (issue 45 item 4), written by the claim
-- that declines it, beside the frozen rows (R2b: they keep no reason). The
-- asking agent's own delivery (a later wait or read), the transcript and
-- the task page read it; a losing caller's replay still carries "" (R2b).
-- A decline taken back (R7a) and given again overwrites it.
CREATE TABLE decline_reasons (
    pending_id TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    declined_at BIGINT NOT NULL
);
