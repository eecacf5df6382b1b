//! "Remind me when it starts" (issue #56, decision 53). A signed-in shopper asks for a text
//! before an upcoming sale opens (its start; a draw: its entries opening) and may take it back
//! until it goes. PostgreSQL's `reminders` is the record and the outbox (`send.rs` claims from
//! it); a Redis set per sale mirrors who waits, so a sale's page reads the count without a query.

pub mod send;

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use crate::{
    domain::{UserId, Voucher, VoucherId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        store,
    },
    Core,
};

/// Why a reminder was not asked for or taken back.
#[derive(Debug, thiserror::Error)]
pub enum ReminderError {
    #[error("no such voucher")]
    NotFound,
    /// The sale has opened (or ended): there is nothing left to remind of.
    #[error("the sale has opened: there is nothing to remind of")]
    Opened,
    /// Taking back a reminder a sender is posting right now: it can no longer be stopped.
    #[error("the text is being sent: it can no longer be taken back")]
    Sending,
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(ReminderError);

impl Unavailable for ReminderError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::NotFound | Self::Opened | Self::Sending => false,
        }
    }
}

/// When `v` opens to shoppers: its start, or a draw's entries opening; its end when that
/// comes first (an admin ended it before it opened: it never will, and no reminder is due).
pub fn opens_at(v: &Voucher) -> DateTime<Utc> {
    v.opening
        .entries_open_at()
        .unwrap_or(v.window.begins_at())
        .min(v.window.ends_at())
}

/// When `v`'s reminders go: `lead` before it opens, or now when that has passed.
pub fn goes_at(core: &Core, v: &Voucher, now: DateTime<Utc>) -> DateTime<Utc> {
    moment(core, v).max(now)
}

/// `lead` before `v` opens: the moment its reminders are due.
fn moment(core: &Core, v: &Voucher) -> DateTime<Utc> {
    let lead = chrono::Duration::from_std(core.config.reminders.lead).unwrap_or_default();
    opens_at(v) - lead
}

/// A shopper's reminder of a sale: when it goes, whether this ask made it, and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reminder {
    pub goes_at: DateTime<Utc>,
    pub new: bool,
    pub state: Mine,
}

/// Where a shopper's reminder of a sale stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mine {
    /// Goes at this instant: `lead` before the sale opens, past already when it is due and
    /// waits for its turn (the shop's pace, a retry); may be taken back.
    Waiting(DateTime<Utc>),
    /// A sender is posting it now: it can no longer be taken back.
    Sending,
    /// The relay took it.
    Sent,
    /// It could not be sent (the relay refused it, or every try failed).
    Failed,
}

impl Mine {
    /// The state's name on the wire (`waiting`, `sending`, `sent`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting(_) => "waiting",
            Self::Sending => "sending",
            Self::Sent => "sent",
            Self::Failed => "failed",
        }
    }
}

async fn upcoming(
    core: &Core,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<Voucher, ReminderError> {
    let v = crate::catalog::get(core, voucher)
        .await?
        .ok_or(ReminderError::NotFound)?
        .voucher;
    if now >= opens_at(&v) {
        return Err(ReminderError::Opened);
    }
    Ok(v)
}

/// `user` asks to be texted before `voucher` opens, in `lang` (a language tag the relay reads);
/// asking again changes nothing.
pub async fn ask(
    core: &Core,
    user: UserId,
    voucher: VoucherId,
    lang: &str,
    now: DateTime<Utc>,
) -> Result<Reminder, ReminderError> {
    let v = upcoming(core, voucher, now).await?;
    let new = store::reminders::ask(&core.db, voucher, user, lang).await?;
    let goes = goes_at(core, &v, now);
    let state = if new {
        Mine::Waiting(goes)
    } else {
        mine_of(core, &v, user, now)
            .await?
            .unwrap_or(Mine::Waiting(goes))
    };
    // The count follows, again on every ask of a waiting reminder (a count Redis lost heals);
    // PostgreSQL holds the ask whatever Redis answers.
    if matches!(state, Mine::Waiting(_)) {
        let mut redis = core.redis.clone();
        let counted: Result<i64, _> = redis
            .sadd(core.keys.voucher(voucher).reminders, user.get())
            .await;
        if let Err(e) = counted {
            tracing::warn!(%voucher, error = %e, "a reminder asked for is not in the sale's count");
        }
    }
    Ok(Reminder {
        goes_at: goes,
        new,
        state,
    })
}

/// `user` takes back their reminder of `voucher` (none, or one already sent or failed: nothing
/// to do). Refused once the sale has opened (the reminder has gone or will not), and while a
/// sender posts it.
pub async fn cancel(
    core: &Core,
    user: UserId,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<(), ReminderError> {
    upcoming(core, voucher, now).await?;
    // A sender may hold it, then give it back to wait for a retry, between the delete and the
    // read: then it waits again unheld, and the delete is tried again.
    let mut tries = 0;
    while !store::reminders::cancel(&core.db, voucher, user, now).await? {
        match store::reminders::state(&core.db, voucher, user, now).await? {
            Some((state, held)) if state == "waiting" => {
                tries += 1;
                if held || tries == 3 {
                    return Err(ReminderError::Sending);
                }
            }
            // None asked, or it was sent or failed: nothing waits.
            _ => return Ok(()),
        }
    }
    let mut redis = core.redis.clone();
    let counted: Result<i64, _> = redis
        .srem(core.keys.voucher(voucher).reminders, user.get())
        .await;
    if let Err(e) = counted {
        tracing::warn!(%voucher, error = %e, "a reminder taken back is still in the sale's count");
    }
    Ok(())
}

/// Where `user`'s reminder of `voucher` stands, if they asked (one that came too late for a
/// sale that opened first: none).
pub async fn mine(
    core: &Core,
    user: UserId,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<Option<Mine>, Backend> {
    let Some(v) = crate::catalog::get(core, voucher).await? else {
        return Ok(None);
    };
    mine_of(core, &v.voucher, user, now).await
}

async fn mine_of(
    core: &Core,
    v: &Voucher,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Option<Mine>, Backend> {
    let state = store::reminders::state(&core.db, v.id, user, now).await?;
    Ok(
        state.and_then(|(state, held)| match (state.as_str(), held) {
            ("waiting", true) => Some(Mine::Sending),
            ("waiting", false) => Some(Mine::Waiting(moment(core, v))),
            ("sent", _) => Some(Mine::Sent),
            ("failed", _) => Some(Mine::Failed),
            _ => None,
        }),
    )
}

/// How many shoppers wait for `voucher`'s reminder (Redis alone).
pub async fn waiting(core: &Core, voucher: VoucherId) -> Result<i64, Backend> {
    let mut redis = core.redis.clone();
    Ok(redis.scard(core.keys.voucher(voucher).reminders).await?)
}

/// How many wait for each of `vouchers`' reminders, in their order (one read per sale, all in
/// flight at once: each sale's set lives in its own slot).
pub async fn waiting_each(core: &Core, vouchers: &[VoucherId]) -> Result<Vec<i64>, Backend> {
    futures::future::try_join_all(vouchers.iter().map(|v| waiting(core, *v))).await
}
