-- Questions that expire on purpose (issue 18): `expires_at` in a message's
-- metadata (microseconds; absent = never), found by the expiry sweep from
-- an index of the open ones only.
ALTER TABLE task_session_messages ADD COLUMN clarification_expires_at BIGINT
    GENERATED ALWAYS AS (coalesce((metadata::jsonb ->> 'expires_at')::bigint, 0)) STORED;
CREATE INDEX task_session_messages_expiring
    ON task_session_messages (clarification_expires_at)
    WHERE type = 'clarification_request' AND clarification_status IN ('', 'pending')
        AND clarification_expires_at > 0;
