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
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(ReminderError);

impl Unavailable for ReminderError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::NotFound | Self::Opened => false,
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
    let lead = chrono::Duration::from_std(core.config.reminders.lead).unwrap_or_default();
    (opens_at(v) - lead).max(now)
}

/// A shopper's reminder of a sale: when it goes, and whether this ask made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reminder {
    pub goes_at: DateTime<Utc>,
    pub new: bool,
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
    let mut redis = core.redis.clone();
    let _: i64 = redis
        .sadd(core.keys.voucher(voucher).reminders, user.get())
        .await?;
    Ok(Reminder {
        goes_at: goes_at(core, &v, now),
        new,
    })
}

/// `user` takes back their reminder of `voucher` (none: nothing to do). Refused once the sale
/// has opened: the reminder has gone or will not.
pub async fn cancel(
    core: &Core,
    user: UserId,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<(), ReminderError> {
    upcoming(core, voucher, now).await?;
    store::reminders::cancel(&core.db, voucher, user).await?;
    let mut redis = core.redis.clone();
    let _: i64 = redis
        .srem(core.keys.voucher(voucher).reminders, user.get())
        .await?;
    Ok(())
}

/// When `user`'s reminder of `voucher` goes, if they asked and it has not gone.
pub async fn mine(
    core: &Core,
    user: UserId,
    voucher: VoucherId,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, Backend> {
    let Some(state) = store::reminders::state(&core.db, voucher, user).await? else {
        return Ok(None);
    };
    let Some(v) = crate::catalog::get(core, voucher).await? else {
        return Ok(None);
    };
    Ok((state == "waiting").then(|| goes_at(core, &v.voucher, now)))
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
