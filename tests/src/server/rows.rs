//! Rows stored straight into a database, below the API: for benchmarks
//! and tests that build their data faster than the API would.

/// Stores a task named `id` with no workspace, straight into `db` (for
/// benchmarks that build their data below the API).
///
/// # Panics
/// On database errors.
pub async fn insert_task(db: &clarify_server::db::Db, id: &str) {
    let now = clarify_server::clock::now_micros();
    let task = clarify_server::db::tasks::Task {
        id: id.to_owned(),
        workspace_id: String::new(),
        title: "bench".into(),
        description: String::new(),
        created_at: now,
        updated_at: now,
    };
    db.write(async |c| clarify_server::db::tasks::insert(c, &task).await)
        .await
        .expect("insert a task");
}

/// Inserts a RUNNING session of `task_id` resumed through `resume_target`
/// (its JSON, or `""` for none) straight into `db`; returns its id.
///
/// # Panics
/// On database errors.
pub async fn insert_session(
    db: &clarify_server::db::Db,
    task_id: &str,
    resume_target: &str,
) -> String {
    let now = clarify_server::clock::now_micros();
    let session = clarify_server::db::sessions::Session {
        id: clarify_server::ids::new_id(),
        task_id: task_id.to_owned(),
        state: clarify_core::SessionState::Running,
        resume_target: resume_target.to_owned(),
        description: String::new(),
        created_by: String::new(),
        created_at: now,
        updated_at: now,
    };
    let token_hash = clarify_server::ids::new_id();
    db.write(async |c| clarify_server::db::sessions::insert(c, &session, &token_hash).await)
        .await
        .expect("insert a session");
    session.id
}
