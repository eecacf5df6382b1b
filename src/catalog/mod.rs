//! Vouchers: creation by admins (`create.rs`), listing, and their sale's state in Redis
//! (`stage.rs`: preload, restore, reconcile).

use chrono::DateTime;
use redis::AsyncCommands;

pub mod admin;
pub mod cache;
pub mod console;
mod create;
mod edit;
mod find;
mod stage;

pub use crate::sale::live::LiveSale;

pub use self::{
    create::{create_voucher, CreateVoucherError},
    edit::edit_voucher,
    find::{find, Found},
    stage::{
        check, preload, preload_live, put_entries, reconcile, restore_entries, with_sale_staged,
        PreloadError, Staged,
    },
};
use crate::{
    domain::{Voucher, VoucherId},
    infra::{backend::Backend, store},
    Core,
};

/// After a voucher changed here (created, ended, topped up): renderings and rows this instance
/// kept are old at once, and every other instance hears of it by pub/sub (best effort: their
/// memory expires within `SECKILL_CATALOG_CACHE_MS` if the message is lost).
pub async fn changed(core: &Core, voucher: VoucherId) {
    core.catalog_changed();
    let mut redis = core.redis.clone();
    let sent: Result<i64, _> = redis
        .publish(core.keys.catalog_channel(), voucher.get())
        .await;
    if let Err(e) = sent {
        tracing::warn!(%voucher, error = %e, "the catalog change was not announced");
    }
}

/// A voucher with its live Redis counts.
#[derive(Debug, Clone)]
pub struct VoucherState {
    pub voucher: Voucher,
    /// Units left to admit (Redis), or PostgreSQL's count when Redis has no sale.
    pub remaining: i64,
    /// Redis's own count, `None` when the sale is not (or no longer) preloaded.
    pub redis_stock: Option<i64>,
    /// Orders admitted and not yet written.
    pub queued: i64,
    /// Orders the worker gave up on (the voucher's dead-letter stream).
    pub dead_lettered: i64,
}

/// A voucher and the units left to admit, as the shop shows them: Redis's stock as this
/// instance last read it (see [`cache`]), PostgreSQL's when Redis has no sale.
#[derive(Debug, Clone)]
pub struct VoucherNow {
    pub voucher: Voucher,
    pub remaining: i64,
}

/// Newest vouchers first, with what is left of each: from this instance's memory when it has
/// read them lately (no PostgreSQL, no Redis).
pub async fn list(core: &Core, limit: i64) -> Result<Vec<VoucherNow>, Backend> {
    let vouchers = core
        .catalog
        .list(&core.db, core.catalog_epoch(), limit)
        .await?;
    with_remaining(core, vouchers.iter().cloned().collect()).await
}

/// One voucher with what is left of it (from memory, like [`list`]).
pub async fn get(core: &Core, id: VoucherId) -> Result<Option<VoucherNow>, Backend> {
    let Some(v) = voucher(core, id).await? else {
        return Ok(None);
    };
    Ok(with_remaining(core, vec![v]).await?.pop())
}

/// One voucher as the catalog holds it, without its stock (from memory, like [`list`]).
pub async fn voucher(core: &Core, id: VoucherId) -> Result<Option<Voucher>, Backend> {
    if !core.known.may_exist(&core.db, id).await? {
        return Ok(None);
    }
    Ok(core.catalog.get(&core.db, core.catalog_epoch(), id).await?)
}

/// Newest vouchers first, with Redis's counts read now (the console: where each unit is).
pub async fn list_counted(core: &Core, limit: i64) -> Result<Vec<VoucherState>, Backend> {
    let vouchers = core
        .catalog
        .list(&core.db, core.catalog_epoch(), limit)
        .await?;
    with_live_counts(core, vouchers.iter().cloned().collect()).await
}

/// The listing's vouchers (at most `limit`, newest first), without their counts: from this
/// instance's memory when it has read them lately.
pub async fn listed(core: &Core, limit: i64) -> Result<std::sync::Arc<Vec<Voucher>>, Backend> {
    Ok(core
        .catalog
        .list(&core.db, core.catalog_epoch(), limit)
        .await?)
}

/// `vouchers` with Redis's counts read now.
pub async fn counted(core: &Core, vouchers: Vec<Voucher>) -> Result<Vec<VoucherState>, Backend> {
    with_live_counts(core, vouchers).await
}

pub(crate) async fn with_remaining(
    core: &Core,
    vouchers: Vec<Voucher>,
) -> Result<Vec<VoucherNow>, Backend> {
    let ids: Vec<VoucherId> = vouchers.iter().map(|v| v.id).collect();
    let stock = core
        .catalog
        .stock((&core.redis, &core.keys), core.catalog_epoch(), &ids)
        .await?;
    Ok(vouchers
        .into_iter()
        .zip(stock)
        .map(|(voucher, stock)| VoucherNow {
            remaining: stock.unwrap_or(voucher.db_stock).max(0),
            voucher,
        })
        .collect())
}

/// `id`'s stock left, end and entrants, read from Redis alone (one round trip, one slot). `None` when
/// the sale is not preloaded.
pub async fn live(core: &Core, id: VoucherId) -> Result<Option<LiveSale>, Backend> {
    let mut redis = core.redis.clone();
    let k = core.keys.voucher(id);
    let (stock, ends_ms, entrants): (Option<i64>, Option<i64>, i64) = redis::pipe()
        .get(&k.stock)
        .hget(&k.sale, "ends_ms")
        .scard(&k.entries)
        .query_async(&mut redis)
        .await?;
    Ok(stock.zip(ends_ms).and_then(|(s, ms)| {
        Some(LiveSale {
            remaining: s.max(0),
            ends_at: DateTime::from_timestamp_millis(ms)?,
            entrants,
        })
    }))
}

/// The titles of the vouchers among `ids` that exist (to label lists of orders).
pub async fn titles(
    core: &Core,
    ids: &[VoucherId],
) -> Result<std::collections::HashMap<VoucherId, String>, Backend> {
    Ok(store::vouchers::titles(&core.db, ids).await?)
}

async fn with_live_counts(
    core: &Core,
    vouchers: Vec<Voucher>,
) -> Result<Vec<VoucherState>, Backend> {
    if vouchers.is_empty() {
        return Ok(Vec::new());
    }
    // One pipeline per voucher (its keys share a slot), all in flight at once: a pipeline
    // across vouchers would span slots on a Redis Cluster.
    let counts = futures::future::try_join_all(vouchers.iter().map(|v| {
        let k = core.keys.voucher(v.id);
        let mut redis = core.redis.clone();
        async move {
            redis::pipe()
                .get(&k.stock)
                .hlen(&k.queued)
                .xlen(&k.dead)
                .query_async::<(Option<i64>, i64, i64)>(&mut redis)
                .await
        }
    }))
    .await?;
    Ok(vouchers
        .into_iter()
        .zip(counts)
        .map(|(voucher, (stock, queued, dead_lettered))| VoucherState {
            remaining: stock.unwrap_or(voucher.db_stock).max(0),
            redis_stock: stock,
            queued,
            dead_lettered,
            voucher,
        })
        .collect())
}
