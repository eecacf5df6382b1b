//! The buy path and order status.
//!
//! [`buy`] is the hot path of sale day: one Lua admission round trip (shared with the buys for
//! the same voucher arriving meanwhile, see [`crate::admissions`]) that counts the shopper's
//! attempts, checks the window (Redis clock), the buyer and the stock, takes a unit, records the
//! buyer and enqueues the order, and returns its global ID at once. The order
//! reaches PostgreSQL through the queue worker; [`order_status`] tells the shopper where it is.

use chrono::{DateTime, Utc};
use redis::AsyncCommands;

use crate::{
    catalog::{self, PreloadError},
    domain::{OrderId, OrderStatus, Shard, UserId, VoucherId},
    memo::Refusal,
    scripts::{AdmissionOutcome, ScriptError},
    store, Core,
};

/// Why a purchase was refused, or could not be decided.
#[derive(Debug, thiserror::Error)]
pub enum BuyError {
    #[error("no such voucher")]
    NotFound,
    #[error("sold out")]
    SoldOut,
    /// The shopper already holds this order on this sale: a repeated buy (a retry after a lost
    /// reply, a second click) learns it instead of buying twice.
    #[error("already bought (order {0})")]
    AlreadyBought(OrderId),
    #[error("the sale has not started")]
    NotStarted,
    #[error("the sale has ended")]
    Ended,
    #[error("too many purchase attempts; slow down")]
    RateLimited,
    #[error("order IDs for today are exhausted")]
    IdsExhausted,
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis: {0}")]
    Script(#[from] ScriptError),
    /// The batched admission call this buy was in failed.
    #[error("redis: {0}")]
    Admission(#[from] std::sync::Arc<ScriptError>),
    #[error("postgres: {0}")]
    Store(#[from] sqlx::Error),
    #[error("preload: {0}")]
    Preload(#[from] PreloadError),
}

/// Tries to buy one unit of `voucher` for `shopper`; returns the order ID at once.
pub async fn buy(core: &Core, shopper: UserId, voucher: VoucherId) -> Result<OrderId, BuyError> {
    if let Some(refusal) = core.refusals.get(&voucher) {
        return refused_from_memory(core, shopper, voucher, refusal).await;
    }
    let mut outcome = core.admissions.admit(voucher, shopper).await?;
    if outcome == AdmissionOutcome::NotLoaded {
        // Never preloaded, or Redis lost it: restore from PostgreSQL once, then decide again.
        let Some(v) = store::vouchers::get(&core.db, voucher).await? else {
            metrics::counter!("seckill_admissions_total", "outcome" => "not_found").increment(1);
            return Err(BuyError::NotFound);
        };
        catalog::preload(core, &v).await?;
        outcome = core.admissions.admit(voucher, shopper).await?;
    }
    let (label, result) = match outcome {
        AdmissionOutcome::Admitted(id) => ("admitted", Ok(id)),
        AdmissionOutcome::SoldOut => ("sold_out", Err(BuyError::SoldOut)),
        AdmissionOutcome::AlreadyBought(id) => ("already_bought", Err(BuyError::AlreadyBought(id))),
        AdmissionOutcome::NotStarted => ("not_started", Err(BuyError::NotStarted)),
        AdmissionOutcome::Ended => ("ended", Err(BuyError::Ended)),
        AdmissionOutcome::IdsExhausted => ("ids_exhausted", Err(BuyError::IdsExhausted)),
        AdmissionOutcome::RateLimited => ("rate_limited", Err(BuyError::RateLimited)),
        // Preloaded a moment ago and gone again: the voucher's sale is not available.
        AdmissionOutcome::NotLoaded => ("not_found", Err(BuyError::NotFound)),
        // `scripts::admit_batch` already retried with the Redis clock's day; a second refusal
        // means the clock jumped a day between two calls.
        AdmissionOutcome::WrongDay(day) => (
            "error",
            Err(BuyError::Script(ScriptError::UnknownReply {
                script: "admit",
                reply: vec![8, day.get()],
            })),
        ),
    };
    metrics::counter!("seckill_admissions_total", "outcome" => label).increment(1);
    match &result {
        Err(BuyError::SoldOut) => core.refusals.insert(voucher, Refusal::SoldOut),
        Err(BuyError::Ended) => core.refusals.insert(voucher, Refusal::Ended),
        _ => {}
    }
    result
}

/// A buy on a sale this instance saw refuse everyone a moment ago: no admission script. A
/// shopper holding an order on it still learns that order (one `HGET`), so a retried buy keeps
/// its answer.
async fn refused_from_memory(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
    refusal: Refusal,
) -> Result<OrderId, BuyError> {
    let mut redis = core.redis.clone();
    let held: Option<String> = redis
        .hget(core.keys.voucher(voucher).buyers, shopper.get())
        .await?;
    if let Some(order) = held.and_then(|hex| OrderId::from_redis_hex(&hex).ok()) {
        metrics::counter!("seckill_admissions_total", "outcome" => "already_bought").increment(1);
        return Err(BuyError::AlreadyBought(order));
    }
    let (label, err) = match refusal {
        Refusal::SoldOut => ("sold_out", BuyError::SoldOut),
        Refusal::Ended => ("ended", BuyError::Ended),
    };
    metrics::counter!("seckill_admissions_total", "outcome" => label, "from" => "memory")
        .increment(1);
    Err(err)
}

/// An order as its shopper sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderView {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub status: OrderStatus,
    /// When it was admitted (the ID's seconds).
    pub created_at: DateTime<Utc>,
}

/// A status read failed.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("postgres: {0}")]
    Store(#[from] sqlx::Error),
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
) -> Result<Option<OrderView>, StatusError> {
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

/// The order `shopper` holds on `voucher` (queued, written, or failed but not released), if
/// any: what the voucher's page shows instead of "Buy now". Redis's buyer → order record
/// first (one `HGET`), PostgreSQL's written orders for a sale Redis no longer holds.
pub async fn order_for(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
) -> Result<Option<OrderView>, StatusError> {
    let mut redis = core.redis.clone();
    let held: Option<String> = redis
        .hget(core.keys.voucher(voucher).buyers, shopper.get())
        .await?;
    let order = match held.and_then(|hex| OrderId::from_redis_hex(&hex).ok()) {
        Some(order) => Some(order),
        None => store::orders::written_for(&core.db, voucher, shopper).await?,
    };
    match order {
        Some(order) => order_status(core, shopper, order).await,
        None => Ok(None),
    }
}

/// The voucher and owner of a queued order: one pipelined `HGET` per preloaded voucher of the
/// order's shard (the ID names it; those vouchers' keys share one slot).
async fn find_queued(
    core: &Core,
    order: OrderId,
) -> Result<Option<(VoucherId, UserId)>, StatusError> {
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

/// The vouchers preloaded into Redis (the registry), skipping anything that is not an ID.
async fn preloaded(core: &Core) -> Result<Vec<VoucherId>, StatusError> {
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
) -> Result<Vec<OrderView>, StatusError> {
    let mut redis = core.redis.clone();
    let mut views = Vec::new();
    for voucher in preloaded(core).await? {
        let queued: Vec<(String, i64)> = redis.hgetall(core.keys.voucher(voucher).queued).await?;
        views.extend(queued.into_iter().filter_map(|(hex, user)| {
            let order = OrderId::from_redis_hex(&hex).ok()?;
            (user == shopper.get()).then(|| OrderView {
                order,
                voucher,
                status: OrderStatus::Queued,
                created_at: order.issued_at(),
            })
        }));
    }
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
