//! The schema's migrations, embedded in the binary: a list written out
//! here instead of `sqlx::migrate!`, whose proc macro compiles a second
//! copy of sqlx with both database drivers (and SQLite's C source) for the
//! build host (issue 25: the first build). Each is what the macro would
//! have made (version, description, checksum), so databases it migrated
//! carry on; a test holds the list against the folders, so a migration
//! file cannot be added without being listed.

use std::borrow::Cow;

use sqlx::SqlStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// `migration!("sqlite", 1, "initial")` embeds
/// `migrations/sqlite/0001_initial.sql` as version 1, "initial".
macro_rules! migration {
    ($backend:literal, $version:literal, $file:literal, $description:literal) => {
        Migration::new(
            $version,
            Cow::Borrowed($description),
            MigrationType::Simple,
            SqlStr::from_static(include_str!(concat!(
                "../../migrations/",
                $backend,
                "/",
                $file
            ))),
            false,
        )
    };
}

/// SQLite's migrations, in order.
#[must_use]
pub fn sqlite() -> Migrator {
    Migrator::with_migrations(vec![
        migration!("sqlite", 1, "0001_initial.sql", "initial"),
        migration!(
            "sqlite",
            2,
            "0002_delivery_pending_index.sql",
            "delivery pending index"
        ),
        migration!("sqlite", 3, "0003_auth.sql", "auth"),
        migration!(
            "sqlite",
            5,
            "0005_mcp_session_owners.sql",
            "mcp session owners"
        ),
        migration!("sqlite", 6, "0006_mcp_session_use.sql", "mcp session use"),
        migration!(
            "sqlite",
            7,
            "0007_session_open_indexes.sql",
            "session open indexes"
        ),
        migration!(
            "sqlite",
            8,
            "0008_clarification_attempts.sql",
            "clarification attempts"
        ),
        migration!("sqlite", 9, "0009_question_expiry.sql", "question expiry"),
        migration!("sqlite", 10, "0010_notifications.sql", "notifications"),
        migration!("sqlite", 11, "0011_projects.sql", "projects"),
        migration!(
            "sqlite",
            12,
            "0012_notify_per_target.sql",
            "notify per target"
        ),
        migration!("sqlite", 13, "0013_attempts_bound.sql", "attempts bound"),
        migration!("sqlite", 14, "0014_quota_holders.sql", "quota holders"),
        migration!("sqlite", 15, "0015_answer_links.sql", "answer links"),
        migration!("sqlite", 16, "0016_chat_messages.sql", "chat messages"),
        migration!("sqlite", 17, "0017_workspace_slack.sql", "workspace slack"),
        migration!("sqlite", 18, "0018_server_keys.sql", "server keys"),
        migration!("sqlite", 19, "0019_mcp_tasks.sql", "mcp tasks"),
        migration!("sqlite", 20, "0020_decline_reasons.sql", "decline reasons"),
        migration!("sqlite", 21, "0021_channel_leases.sql", "channel leases"),
        migration!(
            "sqlite",
            22,
            "0022_workspace_discord.sql",
            "workspace discord"
        ),
        migration!("sqlite", 24, "0024_admins.sql", "admins"),
        migration!("sqlite", 25, "0025_oidc_identities.sql", "oidc identities"),
        migration!("sqlite", 26, "0026_asked_index.sql", "asked index"),
    ])
}

/// PostgreSQL's migrations, in order.
#[must_use]
pub fn postgres() -> Migrator {
    Migrator::with_migrations(vec![
        migration!("postgres", 1, "0001_initial.sql", "initial"),
        migration!(
            "postgres",
            2,
            "0002_delivery_pending_index.sql",
            "delivery pending index"
        ),
        migration!("postgres", 3, "0003_auth.sql", "auth"),
        migration!("postgres", 4, "0004_replicas.sql", "replicas"),
        migration!(
            "postgres",
            5,
            "0005_mcp_session_owners.sql",
            "mcp session owners"
        ),
        migration!("postgres", 6, "0006_mcp_session_use.sql", "mcp session use"),
        migration!(
            "postgres",
            7,
            "0007_session_open_indexes.sql",
            "session open indexes"
        ),
        migration!(
            "postgres",
            8,
            "0008_clarification_attempts.sql",
            "clarification attempts"
        ),
        migration!("postgres", 9, "0009_question_expiry.sql", "question expiry"),
        migration!("postgres", 10, "0010_notifications.sql", "notifications"),
        migration!("postgres", 11, "0011_projects.sql", "projects"),
        migration!(
            "postgres",
            12,
            "0012_notify_per_target.sql",
            "notify per target"
        ),
        migration!("postgres", 13, "0013_attempts_bound.sql", "attempts bound"),
        migration!("postgres", 14, "0014_quota_holders.sql", "quota holders"),
        migration!("postgres", 15, "0015_answer_links.sql", "answer links"),
        migration!("postgres", 16, "0016_chat_messages.sql", "chat messages"),
        migration!(
            "postgres",
            17,
            "0017_workspace_slack.sql",
            "workspace slack"
        ),
        migration!("postgres", 18, "0018_server_keys.sql", "server keys"),
        migration!("postgres", 19, "0019_mcp_tasks.sql", "mcp tasks"),
        migration!(
            "postgres",
            20,
            "0020_decline_reasons.sql",
            "decline reasons"
        ),
        migration!("postgres", 21, "0021_channel_leases.sql", "channel leases"),
        migration!(
            "postgres",
            22,
            "0022_workspace_discord.sql",
            "workspace discord"
        ),
        migration!("postgres", 24, "0024_admins.sql", "admins"),
        migration!(
            "postgres",
            25,
            "0025_oidc_identities.sql",
            "oidc identities"
        ),
        migration!("postgres", 26, "0026_asked_index.sql", "asked index"),
    ])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// What sqlx itself reads from the folder at run time: the same
    /// versions, descriptions and checksums, in the same order.
    async fn assert_matches_folder(listed: Migrator, backend: &str) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(backend);
        let read = Migrator::new(dir)
            .await
            .expect("read the migrations folder");
        let summary = |m: &Migrator| {
            m.iter()
                .map(|m| (m.version, m.description.to_string(), m.checksum.to_vec()))
                .collect::<Vec<_>>()
        };
        assert_eq!(summary(&listed), summary(&read), "{backend}");
    }

    #[tokio::test]
    async fn the_listed_migrations_are_the_folders_exactly() {
        assert_matches_folder(sqlite(), "sqlite").await;
        assert_matches_folder(postgres(), "postgres").await;
    }
}
