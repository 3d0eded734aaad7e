-- Slack (issue 28): the channel a workspace's questions are posted to,
-- besides the operator's, set by its owner.
CREATE TABLE workspace_slack (
    workspace_id TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);
