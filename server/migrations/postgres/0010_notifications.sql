-- Telling people that an agent waits (issue 18): each workspace's own
-- webhook, set by its owner, and the outbox every replica delivers from.
CREATE TABLE workspace_notify (
    workspace_id TEXT PRIMARY KEY,
    webhook_url  TEXT NOT NULL,
    updated_at   BIGINT NOT NULL
);

-- One row per notice and target. `event_key` (pending_id:event) is sent as
-- the Idempotency-Key; UNIQUE with the target, so replicas that see the
-- same change enqueue it once. A sender claims a row by moving `next_at`
-- (compare-and-set), so one replica sends each attempt; a sender that dies
-- mid-send leaves the row due again when its lease ends.
CREATE TABLE notification_outbox (
    id          TEXT PRIMARY KEY,
    target      TEXT NOT NULL,
    event_key   TEXT NOT NULL,
    pending_id  TEXT NOT NULL,
    event       TEXT NOT NULL,
    body        TEXT NOT NULL,
    state       TEXT NOT NULL,
    attempts    BIGINT NOT NULL,
    next_at     BIGINT NOT NULL,
    deadline    BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (target, event_key)
);
CREATE INDEX notification_outbox_due ON notification_outbox (next_at) WHERE state = 'queued';
CREATE INDEX notification_outbox_done ON notification_outbox (updated_at) WHERE state <> 'queued';
