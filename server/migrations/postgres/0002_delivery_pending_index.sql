-- Claims whose delivery is unconfirmed, found without scanning the history
-- (start-up reconciliation, R6). 1 exactly when the flag is JSON `true`,
-- as clarify-core reads it.
ALTER TABLE task_session_messages ADD COLUMN clarification_delivery_pending INTEGER
    GENERATED ALWAYS AS (
        CASE WHEN metadata::jsonb -> 'response_delivery_pending' = 'true'::jsonb THEN 1 ELSE 0 END
    ) STORED;
CREATE INDEX task_session_messages_delivery_pending
    ON task_session_messages (pending_id)
    WHERE type = 'clarification_request' AND clarification_delivery_pending = 1;
