//! Everything that differs between SQLite and PostgreSQL, in one place.

/// The database behind the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file (the default).
    Sqlite,
    /// A PostgreSQL server (several replicas).
    Postgres,
}

impl Backend {
    /// Recognizes the database from its URL scheme.
    #[must_use]
    pub fn from_url(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Some(Self::Postgres)
        } else {
            None
        }
    }

    /// Pool size. SQLite has one writer at a time; more connections only
    /// help readers.
    #[must_use]
    pub fn max_connections(self) -> u32 {
        match self {
            Self::Sqlite => 8,
            Self::Postgres => 16,
        }
    }

    /// Pins the pending list to the open-questions partial index. SQLite's
    /// planner, without statistics, may otherwise walk every clarification
    /// ever asked; PostgreSQL plans from its own statistics.
    #[must_use]
    pub fn open_questions_index_hint(self) -> &'static str {
        match self {
            Self::Sqlite => "INDEXED BY task_session_messages_open",
            Self::Postgres => "",
        }
    }

    /// SQL for the `metadata` column with `key` set to `json` — both fixed
    /// literals of this crate (a status word, `true`), never user input.
    #[must_use]
    pub fn metadata_set(self, key: &'static str, json: &'static str) -> String {
        match self {
            Self::Sqlite => format!("json_set(metadata, '$.{key}', json('{json}'))"),
            Self::Postgres => format!("(jsonb_set(metadata::jsonb, '{{{key}}}', '{json}'))::text"),
        }
    }

    /// SQL that holds when flag `key` of `alias`'s metadata is not JSON
    /// `true` (as [`clarify_core::ClarificationMetadata`] reads a flag) —
    /// a fixed name of this crate, never user input.
    #[must_use]
    pub fn metadata_flag_unset(self, alias: &str, key: &'static str) -> String {
        match self {
            Self::Sqlite => format!("json_type({alias}.metadata, '$.{key}') IS NOT 'true'"),
            Self::Postgres => {
                format!("({alias}.metadata::jsonb -> '{key}') IS DISTINCT FROM 'true'::jsonb")
            }
        }
    }

    /// SQL for the text at `object.key` of `alias`'s metadata, `''` when
    /// absent — fixed names of this crate, never user input.
    #[must_use]
    pub fn metadata_text(self, alias: &str, object: &'static str, key: &'static str) -> String {
        match self {
            Self::Sqlite => {
                format!("coalesce(json_extract({alias}.metadata, '$.{object}.{key}'), '')")
            }
            Self::Postgres => {
                format!("coalesce({alias}.metadata::jsonb -> '{object}' ->> '{key}', '')")
            }
        }
    }

    /// SQL for the `metadata` column without `keys` — fixed names of this
    /// crate, never user input.
    #[must_use]
    pub fn metadata_remove(self, keys: &[&'static str]) -> String {
        match self {
            Self::Sqlite => {
                let paths: Vec<String> = keys.iter().map(|k| format!("'$.{k}'")).collect();
                format!("json_remove(metadata, {})", paths.join(", "))
            }
            Self::Postgres => {
                let minus: String = keys.iter().map(|k| format!(" - '{k}'")).collect();
                format!("(metadata::jsonb{minus})::text")
            }
        }
    }

    /// The suffix of a SELECT that locks the rows it reads until the
    /// transaction ends. SQLite needs none: [`super::Db::begin_write`] holds
    /// the one write lock for the whole transaction.
    #[must_use]
    pub fn for_update(self) -> &'static str {
        match self {
            Self::Sqlite => "",
            Self::Postgres => " FOR UPDATE",
        }
    }

    /// A statement taking a lock, until the transaction ends, on the text
    /// bound as `$1`, for a count-then-insert that must not interleave
    /// with another (a quota). SQLite needs none: [`super::Db::begin_write`]
    /// holds the one write lock for the whole transaction.
    #[must_use]
    pub fn lock_key_sql(self) -> Option<&'static str> {
        match self {
            Self::Sqlite => None,
            // Selected as a number: the Any driver has no type for `void`.
            Self::Postgres => {
                Some("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS held")
            }
        }
    }

    /// A statement letting the transaction it runs in commit without
    /// waiting for the disk, for writes a crash of the database may lose
    /// because something else makes them good. SQLite has none: its units
    /// commit together, on disk ([`super::writer`]).
    #[must_use]
    pub fn commit_without_flush_sql(self) -> Option<&'static str> {
        match self {
            Self::Sqlite => None,
            Self::Postgres => Some("SET LOCAL synchronous_commit = off"),
        }
    }

    /// Whether several processes may share this database (and so need the
    /// coordination of [`crate::cluster`]).
    #[must_use]
    pub fn shared(self) -> bool {
        matches!(self, Self::Postgres)
    }
}
