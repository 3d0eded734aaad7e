-- Claims whose delivery is unconfirmed, found without scanning the history
-- (start-up reconciliation, R6).
ALTER TABLE task_session_messages ADD COLUMN clarification_delivery_pending INTEGER
    GENERATED ALWAYS AS (coalesce(json_extract(metadata, '$.response_delivery_pending'), 0)) VIRTUAL;
CREATE INDEX task_session_messages_delivery_pending
    ON task_session_messages (pending_id)
    WHERE type = 'clarification_request' AND clarification_delivery_pending = 1;
