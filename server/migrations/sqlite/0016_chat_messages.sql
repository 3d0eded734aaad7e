-- Chat apps (issue 28): the message a Slack channel or a Telegram chat was
-- sent for a bundle, kept so that it can be updated when the bundle is
-- resolved; and the signed requests already taken, so a replay is refused.
CREATE TABLE chat_messages (
    pending_id TEXT NOT NULL,
    target TEXT NOT NULL,
    message_ref TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (pending_id, target)
);
CREATE INDEX chat_messages_ref ON chat_messages (target, message_ref);
CREATE TABLE chat_replays (
    request_key TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);
CREATE INDEX chat_replays_seen ON chat_replays (seen_at);
