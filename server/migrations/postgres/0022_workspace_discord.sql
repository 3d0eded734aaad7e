-- Discord (issue 48 item 1): the channel a workspace's questions are posted
-- to, besides the operator's, set by its owner.
CREATE TABLE workspace_discord (
    workspace_id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
