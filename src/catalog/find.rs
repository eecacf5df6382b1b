//! Every sale ever run, found by an admin (issue #55): by a part of the title, by where it
//! stands, by when it starts; newest first, a page at a time after a cursor. Read from
//! PostgreSQL (the instances' memory holds only the listing's 200), with the units left as the
//! shop shows them.

use chrono::{DateTime, Utc};

use super::{with_remaining, VoucherNow};
use crate::{
    domain::{SaleCursor, SaleQuery},
    infra::{backend::Backend, store},
    Core,
};

/// One page of sales found, and where the next one starts (`None`: this was the last).
#[derive(Debug, Clone)]
pub struct Found {
    pub vouchers: Vec<VoucherNow>,
    pub next: Option<SaleCursor>,
}

/// The page of sales `q` asks for, at `now`.
pub async fn find(core: &Core, q: &SaleQuery, now: DateTime<Utc>) -> Result<Found, Backend> {
    let mut vouchers = store::finding::find(&core.db, q, now).await?;
    let more = usize::try_from(q.limit).is_ok_and(|limit| vouchers.len() > limit);
    if more {
        vouchers.pop();
    }
    let next = more.then(|| vouchers.last()).flatten().map(|v| SaleCursor {
        begins_at: v.window.begins_at(),
        id: v.id.get(),
    });
    Ok(Found {
        vouchers: with_remaining(core, vouchers).await?,
        next,
    })
}
