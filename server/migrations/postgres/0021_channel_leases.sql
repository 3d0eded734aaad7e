-- A connection a chat service allows only once per bot (Telegram's
-- getUpdates, Discord's gateway session, an ntfy subscription) is held by
-- one replica at a time (issue 48 item 2): the holder renews `until_micros`;
-- another replica takes the row once it has expired, bumping `fence`, so a
-- holder that was presumed dead can no longer write. The cursor (Telegram's
-- next offset, ntfy's last message id, Discord's session) is kept here and
-- written only under the current fence: nothing is handled twice or lost
-- across a hand-over.
CREATE TABLE channel_leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    fence BIGINT NOT NULL,
    until_micros BIGINT NOT NULL,
    cursor TEXT
);
