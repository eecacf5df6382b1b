//! "Remind me when it starts" (issue #56): what the sale's page says of its reminders, and the
//! two plain forms that ask for one or take it back.

use leptos::prelude::*;

use crate::error::AppError;

/// An upcoming sale's reminders as its page shows them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemindersView {
    /// Shoppers waiting for the text.
    pub waiting: i64,
    /// This shopper's reminder, if they asked.
    pub mine: Option<MyReminder>,
}

/// Where this shopper's reminder stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MyReminder {
    /// Goes at this instant; may be taken back.
    Waiting(chrono::DateTime<chrono::Utc>),
    /// Its moment has come and it waits for its turn (the shop's pace, a retry); may still be
    /// taken back.
    Due,
    /// Being sent now.
    Sending,
    Sent,
    /// It could not be sent.
    Failed,
}

#[cfg(feature = "ssr")]
impl MyReminder {
    /// `m` as the page says it at `now`.
    fn at(m: seckill::reminders::Mine, now: chrono::DateTime<chrono::Utc>) -> Self {
        use seckill::reminders::Mine;
        match m {
            Mine::Waiting(at) if at <= now => Self::Due,
            Mine::Waiting(at) => Self::Waiting(at),
            Mine::Sending => Self::Sending,
            Mine::Sent => Self::Sent,
            Mine::Failed => Self::Failed,
        }
    }
}

/// The reminders of `voucher_id` while it has not opened (`None` once it has, or for a voucher
/// that does not exist).
#[server(prefix = "/sf", endpoint = "reminder_facts")]
pub async fn reminder_facts(voucher_id: i64) -> Result<Option<RemindersView>, AppError> {
    let core = crate::ssr::core()?;
    let id = crate::ssr::voucher_id(voucher_id)?;
    let now = chrono::Utc::now();
    let Some(v) = seckill::catalog::get(&core, id).await? else {
        return Ok(None);
    };
    if now >= seckill::reminders::opens_at(&v.voucher) {
        return Ok(None);
    }
    let mine = match crate::ssr::signed_in(&core).await {
        Ok(p) => seckill::reminders::mine(&core, p.user, id, now)
            .await?
            .map(|m| MyReminder::at(m, now)),
        Err(_) => None,
    };
    Ok(Some(RemindersView {
        waiting: seckill::reminders::waiting(&core, id).await?,
        mine,
    }))
}

/// Asks for a text before the sale opens (signed in), in the page's language; a plain form is
/// sent back to the sale's page.
#[server(prefix = "/sf", endpoint = "remind_me")]
pub async fn remind_me(voucher_id: i64) -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let id = crate::ssr::voucher_id(voucher_id)?;
    let lang = crate::words::lang();
    seckill::reminders::ask(&core, shopper.user, id, lang.tag(), chrono::Utc::now()).await?;
    crate::ssr::redirect_plain_form(&format!("/vouchers/{id}"));
    Ok(())
}

/// Takes the reminder back; a plain form is sent back to the sale's page.
#[server(prefix = "/sf", endpoint = "cancel_reminder")]
pub async fn cancel_reminder(voucher_id: i64) -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let id = crate::ssr::voucher_id(voucher_id)?;
    seckill::reminders::cancel(&core, shopper.user, id, chrono::Utc::now()).await?;
    crate::ssr::redirect_plain_form(&format!("/vouchers/{id}"));
    Ok(())
}

/// How many wait for each of `ids`' reminders (Redis alone; the home page's cards of upcoming
/// sales), at most the listing's 200.
#[server(prefix = "/sf", endpoint = "waiting_counts")]
pub async fn waiting_counts(ids: Vec<i64>) -> Result<Vec<(i64, i64)>, AppError> {
    let core = crate::ssr::core()?;
    let ids: Vec<seckill::domain::VoucherId> = ids
        .into_iter()
        .take(200)
        .filter_map(|id| seckill::domain::VoucherId::try_from(id).ok())
        .collect();
    let counts = seckill::reminders::waiting_each(&core, &ids).await?;
    Ok(ids.iter().map(|id| id.get()).zip(counts).collect())
}
