-- A task found again by its project (issue 25: `clarify mcp` names its task
-- after the git repository it runs in): one task per user (owner_id, ''
-- with auth off), workspace ('' for none) and project name. Later
-- processes of the same project and user get the same task; a race of two
-- first processes creates one (the primary key decides).
CREATE TABLE project_tasks (
    owner_id      TEXT NOT NULL,
    workspace_id  TEXT NOT NULL,
    project       TEXT NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (owner_id, workspace_id, project)
);

-- What a session is, in words: `clarify mcp` says which client and branch.
ALTER TABLE task_sessions ADD COLUMN description TEXT NOT NULL DEFAULT '';
