//! Statements that travel together (issue 17). sqlx runs each SQLite
//! connection on a thread of its own, and every statement is a round trip
//! to it: two thread hand-offs, which on a small machine cost many times
//! what the statement itself does. A batch is one trip on SQLite (one
//! query of several statements, each with its own result) and one
//! statement after the other on PostgreSQL, whose protocol takes one
//! statement per prepared query.
//!
//! Each step is written as an ordinary query numbering its own parameters
//! from `$1`; the batch renumbers them when it joins the steps. A batch
//! that writes runs inside the caller's transaction, so a step that fails
//! undoes the steps before it with the rest of the transaction.

use futures_util::TryStreamExt as _;
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Arguments as _, Either, Executor as _, Row as _};

use super::Backend;

/// A value bound to a step's parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Text.
    Text(String),
    /// An integer.
    Int(i64),
    /// An integer or NULL.
    MaybeInt(Option<i64>),
}

impl From<&str> for Value {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<i64> for Value {
    fn from(number: i64) -> Self {
        Self::Int(number)
    }
}

impl From<Option<i64>> for Value {
    fn from(number: Option<i64>) -> Self {
        Self::MaybeInt(number)
    }
}

/// What one step did.
#[derive(Default)]
pub struct Done {
    /// The rows it returned (a SELECT's, or a write's RETURNING).
    pub rows: Vec<AnyRow>,
    /// The rows it changed.
    pub affected: u64,
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Done")
            .field("rows", &self.rows.len())
            .field("affected", &self.affected)
            .finish()
    }
}

impl Done {
    /// The first column of every row it returned, as text, each value once
    /// in the order first seen.
    ///
    /// # Errors
    /// When that column is not text.
    pub fn distinct_texts(&self) -> sqlx::Result<Vec<String>> {
        let mut texts: Vec<String> = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let text: String = row.try_get(0)?;
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        Ok(texts)
    }
}

/// Statements to run in order, as one trip where the database allows it.
#[derive(Debug, Default)]
pub struct Batch {
    steps: Vec<(String, Vec<Value>)>,
}

impl Batch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a step: `sql` numbers its parameters `$1..` and `values` binds
    /// them in that order. Returns the step's index in [`Batch::run`]'s
    /// answer.
    pub fn push(&mut self, sql: String, values: Vec<Value>) -> usize {
        self.steps.push((sql, values));
        self.steps.len() - 1
    }

    /// Whether it has no step.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Adds `other`'s steps after these; returns the index of its first.
    pub fn append(&mut self, other: Batch) -> usize {
        let first = self.steps.len();
        self.steps.extend(other.steps);
        first
    }

    /// Runs every step on `conn`, in order; one [`Done`] per step.
    ///
    /// # Errors
    /// The first step's error that fails; the steps after it do not run.
    pub async fn run(self, conn: &mut AnyConnection, backend: Backend) -> sqlx::Result<Vec<Done>> {
        match backend {
            Backend::Sqlite => self.run_joined(conn).await,
            Backend::Postgres => self.run_each(conn).await,
        }
    }

    /// One query of every step, parameters renumbered: one trip. sqlx's
    /// SQLite driver binds `$N` to the query's N-th value in whichever
    /// statement it appears, and reports each statement's result in turn.
    async fn run_joined(self, conn: &mut AnyConnection) -> sqlx::Result<Vec<Done>> {
        let count = self.steps.len();
        let mut sql = String::new();
        let mut arguments = sqlx::any::AnyArguments::default();
        for (text, values) in self.steps {
            sql.push_str(&renumber(&text, arguments.len()));
            sql.push_str(";\n");
            for value in values {
                bind(&mut arguments, value)?;
            }
        }
        let query = sqlx::query_with(super::sql(sql), arguments);
        let mut results = conn.fetch_many(query);
        let mut done = Vec::with_capacity(count);
        let mut step = Done::default();
        while let Some(item) = results.try_next().await? {
            match item {
                Either::Left(result) => {
                    step.affected = result.rows_affected();
                    done.push(std::mem::take(&mut step));
                }
                Either::Right(row) => step.rows.push(row),
            }
        }
        if done.len() != count {
            return Err(sqlx::Error::Protocol(format!(
                "a batch of {count} statements reported {} results",
                done.len()
            )));
        }
        Ok(done)
    }

    /// Each step as a query of its own, one trip each.
    async fn run_each(self, conn: &mut AnyConnection) -> sqlx::Result<Vec<Done>> {
        let mut done = Vec::with_capacity(self.steps.len());
        for (text, values) in self.steps {
            let mut arguments = sqlx::any::AnyArguments::default();
            for value in values {
                bind(&mut arguments, value)?;
            }
            let mut results = conn.fetch_many(sqlx::query_with(super::sql(text), arguments));
            let mut step = Done::default();
            while let Some(item) = results.try_next().await? {
                match item {
                    Either::Left(result) => step.affected += result.rows_affected(),
                    Either::Right(row) => step.rows.push(row),
                }
            }
            done.push(step);
        }
        Ok(done)
    }
}

fn bind(arguments: &mut sqlx::any::AnyArguments, value: Value) -> sqlx::Result<()> {
    match value {
        Value::Text(text) => arguments.add(text),
        Value::Int(number) => arguments.add(number),
        Value::MaybeInt(number) => arguments.add(number),
    }
    .map_err(sqlx::Error::Encode)
}

/// `sql` with each parameter `$N` outside quotes made `$(N + offset)`.
/// Quoted text (a JSON path such as `'$.status'`, an identifier) is left
/// as it is.
fn renumber(sql: &str, offset: usize) -> String {
    if offset == 0 {
        return sql.to_owned();
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match (quote, c) {
            // A doubled quote inside quotes closes and reopens: same state.
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '$') if chars.peek().is_some_and(char::is_ascii_digit) => {
                let mut number = 0_usize;
                while let Some(digit) = chars.peek().and_then(|d| d.to_digit(10)) {
                    number = number * 10 + digit as usize;
                    chars.next();
                }
                out.push_str(&(number + offset).to_string());
            }
            (None, _) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::renumber;

    #[test]
    fn renumbers_parameters_only() {
        assert_eq!(
            renumber("UPDATE t SET a = $1, b = $12 WHERE c IN ($2, $3)", 4),
            "UPDATE t SET a = $5, b = $16 WHERE c IN ($6, $7)"
        );
        assert_eq!(renumber("SELECT $1", 0), "SELECT $1");
    }

    #[test]
    fn leaves_quoted_text_alone() {
        assert_eq!(
            renumber(
                "SELECT json_set(m, '$.status', '$1 it''s $2'), \"$3\" FROM t WHERE x = $1",
                2
            ),
            "SELECT json_set(m, '$.status', '$1 it''s $2'), \"$3\" FROM t WHERE x = $3"
        );
    }
}
