-- An operator's role (issue 49 item 5): an admin reads the audit export of
-- every workspace; everyone else reads only what they may see (A1-A3).
-- Set by `clarify token create --admin`, on the database directly.
ALTER TABLE users ADD COLUMN admin BIGINT NOT NULL DEFAULT 0;
