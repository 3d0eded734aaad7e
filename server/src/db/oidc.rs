//! People signed in through the team's OpenID provider (issue 49 item 3),
//! known by (issuer, sub): the provider's names are chosen by its users, so
//! a name never links a person to an existing user (migration 0025).

use sqlx::{AnyConnection, AnyExecutor};

use super::users::{self, User};

/// The user the provider's (`issuer`, `subject`) signed in as before.
///
/// # Errors
/// Database errors.
pub async fn user_of(
    db: impl AnyExecutor<'_>,
    issuer: &str,
    subject: &str,
) -> sqlx::Result<Option<User>> {
    sqlx::query_as(
        "SELECT u.id, u.name, u.created_at FROM oidc_identities i \
         JOIN users u ON u.id = i.user_id WHERE i.issuer = $1 AND i.subject = $2",
    )
    .bind(issuer)
    .bind(subject)
    .fetch_optional(db)
    .await
}

/// The user of (`issuer`, `subject`), made the first time: named `name`,
/// or `name-2`, `name-3`, … when that is another user's.
///
/// # Errors
/// Database errors.
pub async fn user_for(
    db: &mut AnyConnection,
    issuer: &str,
    subject: &str,
    name: &str,
    new_id: &str,
    now: i64,
) -> sqlx::Result<User> {
    if let Some(user) = user_of(&mut *db, issuer, subject).await? {
        return Ok(user);
    }
    let mut candidate = name.to_owned();
    let mut n = 1;
    while users::by_name(&mut *db, &candidate).await?.is_some() {
        n += 1;
        candidate = format!("{name}-{n}");
    }
    let user = User {
        id: new_id.to_owned(),
        name: candidate,
        created_at: now,
    };
    users::insert(db, &user).await?;
    sqlx::query(
        "INSERT INTO oidc_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(issuer)
    .bind(subject)
    .bind(&user.id)
    .bind(now)
    .execute(db)
    .await?;
    Ok(user)
}
