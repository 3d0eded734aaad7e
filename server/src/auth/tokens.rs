//! Personal access tokens: random, shown once, stored hashed, revocable,
//! optionally expiring.

use crate::clock::now_micros;
use crate::db::Db;
use crate::db::users::{self, AccessToken, User};
use crate::ids::{hash_secret, new_id, new_secret};

/// The prefix of personal access tokens (agent tokens use `clk_agent_`).
pub const PAT_PREFIX: &str = "clk_pat_";

/// Creates a token for the user `name`, creating the user if needed.
/// Returns the token (its only appearance) and its record.
///
/// # Errors
/// Database errors.
pub async fn create(
    db: &Db,
    name: &str,
    expires_in_days: Option<u32>,
) -> sqlx::Result<(String, AccessToken)> {
    let now = now_micros();
    let mut tx = db.begin_write().await?;
    let user = match users::by_name(&mut *tx, name).await? {
        Some(user) => user,
        None => {
            let user = User {
                id: new_id(),
                name: name.to_owned(),
                created_at: now,
            };
            users::insert(&mut tx, &user).await?;
            user
        }
    };
    let secret = new_secret(PAT_PREFIX);
    let record = AccessToken {
        id: new_id(),
        user_id: user.id,
        created_at: now,
        expires_at: expires_in_days
            .map(|days| now.saturating_add(i64::from(days).saturating_mul(86_400 * 1_000_000))),
        revoked_at: None,
        last_used_at: None,
    };
    users::insert_token(&mut tx, &record, &hash_secret(&secret)).await?;
    tx.commit().await?;
    Ok((secret, record))
}
