-- A session's open questions, and its answers kept for pickup, found
-- without walking the session's history: the pending-action projection of
-- a page of tasks, a session's active bundles, and the agent's wait ran
-- through every message of each session (issue 17's load test: a page of
-- 50 tasks took 50 ms once their sessions had a few hundred answers).
CREATE INDEX task_session_messages_open_by_session
    ON task_session_messages (task_session_id)
    WHERE type = 'clarification_request' AND clarification_status IN ('', 'pending');
CREATE INDEX task_session_messages_kept_by_session
    ON task_session_messages (task_session_id)
    WHERE type = 'clarification_request' AND clarification_delivery_pending = 1;
