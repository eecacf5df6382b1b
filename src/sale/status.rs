//! Where a shopper's orders are: queued in Redis, or written to PostgreSQL (and then awaiting
//! payment, paid, cancelled or failed).

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use super::sold_out::Known;
use crate::{
    domain::{OrderId, OrderStatus, Shard, UserId, VoucherId},
    infra::{backend::Backend, store},
    Core,
};

/// An order as its shopper sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderView {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub status: OrderStatus,
    /// When it was admitted (the ID's seconds).
    pub created_at: DateTime<Utc>,
}

/// Where `order` is, if it is `shopper`'s. Someone else's order is `None`, exactly like an
/// unknown one (I7).
///
/// Redis is read before PostgreSQL: the worker removes an order from the queued hash only after
/// its commit, so an order missing from Redis is either in PostgreSQL already or unknown.
pub async fn order_status(
    core: &Core,
    shopper: UserId,
    order: OrderId,
) -> Result<Option<OrderView>, Backend> {
    if let Some((voucher, owner)) = find_queued(core, order).await? {
        if owner == shopper {
            return Ok(Some(OrderView {
                order,
                voucher,
                status: OrderStatus::Queued,
                created_at: order.issued_at(),
            }));
        }
        // Someone else's queued order under this ID: after a counter regression the asking
        // shopper's own order may be written under the same ID, so PostgreSQL decides.
    }
    Ok(store::orders::find_for_user(&core.db, order, shopper)
        .await?
        .map(|s| OrderView {
            order,
            voucher: s.voucher,
            status: s.status,
            created_at: order.issued_at(),
        }))
}

/// How far ahead of this instance's clock Redis's may run (and so open a sale) without
/// [`order_for`] answering "no order" from the window alone.
const CLOCK_MARGIN: chrono::TimeDelta = chrono::TimeDelta::seconds(2);

/// The order `shopper` holds on `voucher` (queued, written, or failed but not released), if
/// any: what the voucher's page shows instead of "Buy now". Redis's buyer → order record and
/// whether Redis holds the sale, in one round trip: a sale Redis holds lists every live order's
/// shopper among its buyers (a restore puts PostgreSQL's back, design.md §2), so no buyer there is
/// no order; PostgreSQL's written orders are asked only for a sale Redis no longer holds.
/// Before a sale opens nobody holds an order on it (admissions refuse until then and no one
/// moves a window's start), so the crowd reloading the page in the minute before the opening
/// costs no store at all: the window comes from the catalog's memory, with a margin for the
/// Redis clock (which decides the opening) running ahead of this one. Once the sale refuses
/// everyone (a refusal here, or no unit left in the stock reading) its buyers are read once,
/// and the answer comes from them with no Redis call either, under the same bounds as a
/// refused buy's (decision 29): the crowd reloading a sold-out sale's page.
pub async fn order_for(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
) -> Result<Option<OrderView>, Backend> {
    let opens = core
        .catalog
        .get(&core.db, core.catalog_epoch(), voucher)
        .await?
        .map(|v| v.window.begins_at());
    if opens.is_some_and(|at| chrono::Utc::now() + CLOCK_MARGIN < at) {
        return Ok(None);
    }
    match core.sold_out.lookup(voucher, shopper) {
        Known::Bought(order) => return order_status(core, shopper, order).await,
        Known::NotBought => return Ok(None),
        Known::Unknown if sold_out_here(core, voucher).await? => {
            core.sold_out.read_later((&core.redis, &core.keys), voucher);
        }
        Known::Unknown => {}
    }
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let (held, preloaded): (Option<String>, bool) = redis::pipe()
        .hget(&keys.buyers, shopper.get())
        .exists(&keys.sale)
        .query_async(&mut redis)
        .await?;
    let order = match held.and_then(|hex| OrderId::from_redis_hex(&hex).ok()) {
        Some(order) => Some(order),
        None if preloaded => None,
        None => store::orders::written_for(&core.db, voucher, shopper).await?,
    };
    match order {
        Some(order) => order_status(core, shopper, order).await,
        None => Ok(None),
    }
}

/// Whether this instance knows `voucher` to refuse everyone: a refusal it answers from memory
/// (sold out or ended, decision 17), or a stock reading of 0 (decision 28; the admission script
/// takes a unit and records its buyer at once, so no unit left means the buyers are final until
/// one comes back, which forgets the reading and the buyers alike).
async fn sold_out_here(core: &Core, voucher: VoucherId) -> Result<bool, Backend> {
    if core.refusals.get(&voucher).is_some() {
        return Ok(true);
    }
    let stock = core
        .catalog
        .stock((&core.redis, &core.keys), core.catalog_epoch(), &[voucher])
        .await?;
    Ok(stock.first().copied().flatten() == Some(0))
}

/// The voucher and owner of a queued order: one pipelined `HGET` per preloaded voucher of the
/// order's shard (the ID names it; those vouchers' keys share one slot).
async fn find_queued(core: &Core, order: OrderId) -> Result<Option<(VoucherId, UserId)>, Backend> {
    let mut redis = core.redis.clone();
    let shard = Shard::of_order(order);
    let mut vouchers = preloaded(core).await?;
    vouchers.retain(|v| Shard::of_voucher(*v) == shard);
    if vouchers.is_empty() {
        return Ok(None);
    }
    let field = order.to_redis_hex();
    let mut pipe = redis::pipe();
    for v in &vouchers {
        pipe.hget(core.keys.voucher(*v).queued, &field);
    }
    let owners: Vec<Option<i64>> = pipe.query_async(&mut redis).await?;
    Ok(vouchers
        .into_iter()
        .zip(owners)
        .find_map(|(v, owner)| Some((v, UserId::try_from(owner?).ok()?))))
}

/// `shopper`'s orders still queued: on each preloaded sale, the order the buyers hash gives
/// them, if the queued hash still holds it. Two small reads per sale, all in flight at once
/// (one sale's keys are one slot), whatever the size of the sales' queues.
async fn queued_for(core: &Core, shopper: UserId) -> Result<Vec<OrderView>, Backend> {
    let held = futures::future::try_join_all(preloaded(core).await?.into_iter().map(|voucher| {
        let mut redis = core.redis.clone();
        let keys = core.keys.voucher(voucher);
        async move {
            let hex: Option<String> = redis.hget(&keys.buyers, shopper.get()).await?;
            let Some(hex) = hex else {
                return Ok::<_, Backend>(None);
            };
            let queued: bool = redis.hexists(&keys.queued, &hex).await?;
            Ok(queued
                .then(|| OrderId::from_redis_hex(&hex).ok())
                .flatten()
                .map(|order| OrderView {
                    order,
                    voucher,
                    status: OrderStatus::Queued,
                    created_at: order.issued_at(),
                }))
        }
    }))
    .await?;
    Ok(held.into_iter().flatten().collect())
}

/// The vouchers preloaded into Redis (the registry), skipping anything that is not an ID.
async fn preloaded(core: &Core) -> Result<Vec<VoucherId>, Backend> {
    let mut redis = core.redis.clone();
    let ids: Vec<i64> = redis.smembers(core.keys.preloaded_vouchers()).await?;
    Ok(ids
        .into_iter()
        .filter_map(|id| VoucherId::try_from(id).ok())
        .collect())
}

/// `shopper`'s orders, newest first: queued ones from Redis, then PostgreSQL's.
pub async fn my_orders(
    core: &Core,
    shopper: UserId,
    limit: i64,
) -> Result<Vec<OrderView>, Backend> {
    let mut views = queued_for(core, shopper).await?;
    let stored = store::orders::list_for_user(&core.db, shopper, limit).await?;
    let queued: std::collections::HashSet<OrderId> = views.iter().map(|v| v.order).collect();
    views.extend(
        stored
            .into_iter()
            .filter(|s| !queued.contains(&s.order))
            .map(|s| OrderView {
                order: s.order,
                voucher: s.voucher,
                status: s.status,
                created_at: s.order.issued_at(),
            }),
    );
    views.sort_by_key(|v| std::cmp::Reverse(v.order));
    views.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok(views)
}
