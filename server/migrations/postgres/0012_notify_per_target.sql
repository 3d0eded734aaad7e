-- Fair share (issue 26): notices are delivered target by target, a few at
-- a time each, so a slow webhook delays only itself; each target's queued
-- rows are read from an index of their own.
CREATE INDEX notification_outbox_target_due ON notification_outbox (target, next_at)
    WHERE state = 'queued';
