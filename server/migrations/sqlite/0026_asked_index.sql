-- Every bundle asked, by when (issue 49 items 2 and 5): the Activity page
-- and the audit export walk a span of time through this index, so their
-- cost follows the span, never the length of the history.
CREATE INDEX task_session_messages_asked
    ON task_session_messages (created_at, pending_id)
    WHERE type = 'clarification_request';
