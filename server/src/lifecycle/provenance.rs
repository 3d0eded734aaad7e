//! Provenance: who resolves a bundle and how ([`Via`], from the adapter),
//! the attempts that lost, and the log of them all.

use clarify_core::PendingId;
use clarify_core::listing::{Cursor, clamp_limit};
use clarify_core::{ANONYMOUS, AnsweredBy, Attempt, Attempts, Channel};

use super::{Reading, Resolving, Result};
use crate::auth::Caller;
use crate::clock;
use crate::db::{attempts, page, users};
use crate::ids::new_id;

/// How an answer arrived, as the adapter that took it knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Via {
    /// The channel.
    pub channel: Channel,
    /// The MCP client's `clientInfo.name`; `""` elsewhere.
    pub client: String,
}

impl Via {
    /// `channel`, with no client name.
    #[must_use]
    pub fn channel(channel: Channel) -> Self {
        Self {
            channel,
            client: String::new(),
        }
    }
}

/// What a later attempt found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lost {
    /// Someone else had won (`claimed: false`).
    ToWinner,
    /// Nobody won and it can no longer be answered (409).
    Inactive,
}

impl Resolving {
    /// Who `caller` is, answering through `via`: the user's name under
    /// auth, `anonymous` with auth off.
    pub(super) async fn answered_by(&self, caller: &Caller, via: &Via) -> Result<AnsweredBy> {
        // Defaults chosen at expiry are nobody's.
        let user = match caller {
            _ if via.channel == Channel::Expiry => String::new(),
            Caller::User(id) => users::by_id(self.shared.db.pool(), id)
                .await?
                .map_or_else(|| id.to_string(), |u| u.name),
            // At its terminal sits the person whose request made the
            // agent's session (issue 47).
            Caller::Agent(agent) if via.channel == Channel::Terminal => match &agent.creator {
                Some(id) => users::by_id(self.shared.db.pool(), id)
                    .await?
                    .map_or_else(|| id.to_string(), |u| u.name),
                None => ANONYMOUS.to_owned(),
            },
            Caller::Unscoped | Caller::Agent(_) => ANONYMOUS.to_owned(),
        };
        Ok(AnsweredBy::new(&user, via.channel, &via.client))
    }

    /// Appends a losing attempt to the log; a failure is logged, never
    /// turned into an error for the loser, whose answer stands as told.
    pub(super) async fn log_attempt(&self, pending_id: &str, by: &AnsweredBy, lost: Lost) {
        let outcome = match lost {
            Lost::ToWinner => "lost",
            Lost::Inactive => "inactive",
        };
        let now = clock::now_micros();
        let id = new_id();
        let logged = self
            .shared
            .db
            .write(async |c| attempts::record(c, &id, pending_id, by, outcome, now).await)
            .await;
        if let Err(error) = logged {
            tracing::warn!(pending_id, %error, "an attempt was not logged");
        }
    }
}

impl Reading {
    /// `GET /clarification/{id}/attempts`: the winner (from its claim) and
    /// every later attempt, oldest first, for whoever may see the bundle.
    ///
    /// # Errors
    /// 404 unknown or foreign.
    pub async fn attempts(
        &self,
        caller: &Caller,
        pending_id: &PendingId,
        cursor_text: &str,
        limit: Option<i64>,
    ) -> Result<Attempts> {
        let pending_id = pending_id.as_str();
        let bundle = self.shared.authorized_bundle(caller, pending_id).await?;
        let after = super::cursor(cursor_text.trim())?;
        let limit = clamp_limit(limit);
        let mut list = Vec::new();
        // The winner heads the first page and counts toward its `limit`
        // (issue 45 item 8b: `limit=10` answered eleven).
        if after.is_none()
            && let Some(by) = bundle.answered_by()
        {
            list.push(Attempt {
                by,
                at: clock::rfc3339(bundle.updated_at()),
                outcome: "won".to_owned(),
            });
        }
        let logged = limit.saturating_sub(u32::try_from(list.len()).unwrap_or(0));
        let (rows, next_cursor) = if logged == 0 {
            // A page of the winner alone: the next starts at the first
            // logged attempt, if any, just before which the cursor points.
            let (first, _) =
                attempts::of_bundle_page(self.shared.db.pool(), pending_id, None, 1).await?;
            let next = first.first().map_or_else(String::new, |r| {
                Cursor {
                    created_at: r.created_at - 1,
                    id: r.id.clone(),
                }
                .encode()
            });
            (Vec::new(), next)
        } else {
            let (rows, more_rows) =
                attempts::of_bundle_page(self.shared.db.pool(), pending_id, after.as_ref(), logged)
                    .await?;
            let next = page::next_cursor(&rows, more_rows, |r| (r.created_at, r.id.clone()));
            (rows, next)
        };
        for row in rows {
            list.push(Attempt {
                by: AnsweredBy {
                    user: row.user_name,
                    channel: row.channel,
                    client: row.client,
                    alike: 0,
                },
                at: clock::rfc3339(row.created_at),
                outcome: row.outcome,
            });
        }
        let more = attempts::unlogged(self.shared.db.pool(), pending_id).await?;
        Ok(Attempts {
            pending_id: pending_id.to_owned(),
            attempts: list,
            more: u64::try_from(more).unwrap_or(0),
            next_cursor,
        })
    }
}
