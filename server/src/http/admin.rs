//! Who reads a team-wide view (the audit export, the Activity page) as
//! whom: a user under their visibility (A1-A3), an admin (`clarify token
//! create --admin`) as the unscoped operator; an agent reads none.

use super::error::{Error, Result};
use crate::auth::Caller;
use crate::db::users;
use crate::lifecycle as domain;
use crate::state::AppState;

/// The user whose visibility applies (`None`: every workspace) and the
/// caller to read bundles as; `refusal` is what an agent is told.
pub async fn reader(
    state: &AppState,
    caller: &Caller,
    refusal: &'static str,
) -> Result<(Option<String>, Caller)> {
    match caller {
        Caller::Unscoped => Ok((None, Caller::Unscoped)),
        Caller::User(id) => {
            let admin = users::is_admin(state.db().pool(), id.as_str())
                .await
                .map_err(domain::Error::from)?;
            Ok(if admin {
                (None, Caller::Unscoped)
            } else {
                (Some(id.as_str().to_owned()), caller.clone())
            })
        }
        Caller::Agent(_) => Err(Error::Forbidden(refusal)),
    }
}
