//! [`buy`]: the hot path of sale day: one Lua admission round trip (shared with the buys for
//! the same voucher arriving meanwhile, see [`crate::sale::admissions`]) that counts the shopper's
//! attempts, checks the window (Redis clock), the buyer and the stock, takes a unit, records the
//! buyer and enqueues the order, and returns its global ID at once. The order
//! reaches PostgreSQL through the order writer ([`crate::jobs`]).

use std::sync::OnceLock;

use chrono::Utc;
use metrics::Counter;
use redis::AsyncCommands;

use crate::{
    catalog::{self, PreloadError, Staged},
    domain::{OrderId, UserId, VoucherId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        scripts::AdmissionOutcome,
        store,
    },
    sale::{refusals::Refusal, sold_out::Known},
    Core,
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
    /// A draw sale sells nothing before its draw, nor while its units go down the ranking.
    #[error("this sale opens by a draw: the units go to the entrants first")]
    DrawPending,
    #[error("order IDs for today are exhausted")]
    IdsExhausted,
    #[error(transparent)]
    Backend(#[from] Backend),
    #[error("preload: {0}")]
    Preload(#[from] PreloadError),
}

backend_error!(BuyError);

impl Unavailable for BuyError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            Self::NotFound
            | Self::SoldOut
            | Self::AlreadyBought(_)
            | Self::NotStarted
            | Self::Ended
            | Self::RateLimited
            | Self::DrawPending
            | Self::IdsExhausted => false,
        }
    }
}

/// Tries to buy one unit of `voucher` for `shopper`; returns the order ID at once.
pub async fn buy(core: &Core, shopper: UserId, voucher: VoucherId) -> Result<OrderId, BuyError> {
    if let Some(refusal) = core.refusals.get(&voucher) {
        return refused_from_memory(core, shopper, voucher, refusal).await;
    }
    if !core.known.may_exist(&core.db, voucher).await? {
        count("not_found");
        return Err(BuyError::NotFound);
    }
    // Its master changed: reconciled from PostgreSQL once, then decided again.
    let outcome = catalog::with_sale_staged::<BuyError, _, _, _>(
        core,
        voucher,
        |o| match o {
            AdmissionOutcome::Unreconciled => Staged::Unreconciled,
            // Loaded below only while the sale is on.
            _ => Staged::Ready,
        },
        || core.admissions.admit(voucher, shopper),
    )
    .await?;
    match outcome {
        AdmissionOutcome::NotLoaded => admit_unloaded(core, shopper, voucher).await,
        outcome => decided(core, voucher, outcome),
    }
}

/// What the admission script decided, as the shopper's answer; counted, and a refusal of
/// everyone kept in memory for the buys after it.
fn decided(
    core: &Core,
    voucher: VoucherId,
    outcome: AdmissionOutcome,
) -> Result<OrderId, BuyError> {
    let (label, result) = match outcome {
        AdmissionOutcome::Admitted(id) => ("admitted", Ok(id)),
        AdmissionOutcome::SoldOut => ("sold_out", Err(BuyError::SoldOut)),
        AdmissionOutcome::AlreadyBought(id) => ("already_bought", Err(BuyError::AlreadyBought(id))),
        AdmissionOutcome::NotStarted => ("not_started", Err(BuyError::NotStarted)),
        AdmissionOutcome::Ended => ("ended", Err(BuyError::Ended)),
        AdmissionOutcome::IdsExhausted => ("ids_exhausted", Err(BuyError::IdsExhausted)),
        AdmissionOutcome::RateLimited => ("rate_limited", Err(BuyError::RateLimited)),
        AdmissionOutcome::DrawPending => ("draw_pending", Err(BuyError::DrawPending)),
        // Loaded a moment ago and gone again: the voucher's sale is not available.
        AdmissionOutcome::NotLoaded => ("not_found", Err(BuyError::NotFound)),
        // Reconciled a moment ago and its master changed again: a failover in progress.
        AdmissionOutcome::Unreconciled => {
            ("unavailable", Err(BuyError::Backend(Backend::Unreconciled)))
        }
        // `scripts::admit_batch` already retried with the Redis clock's day; a second refusal
        // means the clock jumped a day between two calls.
        AdmissionOutcome::WrongDay(day) => (
            "error",
            Err(BuyError::Backend(AdmissionOutcome::clock_jumped(day))),
        ),
    };
    count(label);
    match &result {
        Err(BuyError::SoldOut) => core.refusals.insert(voucher, Refusal::SoldOut),
        Err(BuyError::Ended) => core.refusals.insert(voucher, Refusal::Ended),
        // A sale that admits again had units back: whatever this instance kept of its buyers is
        // old (the announcement does this everywhere; this covers one that has not arrived).
        Ok(_) => {
            core.sold_out.forget_kept(voucher);
            core.catalog.forget_stock(voucher);
        }
        _ => {}
    }
    result
}

/// A buy on a sale Redis does not hold. While the sale is on (never preloaded, or Redis lost
/// it), it is loaded from PostgreSQL and the buy decided again. An ended one stays out of Redis,
/// as the sweeper left it (retired) or as Redis lost it: loading it back would read and write
/// its every buyer to refuse one buy, as often as anyone asks. It sells nothing; a shopper who
/// holds an order on it learns that order from PostgreSQL, so a repeated buy still answers the
/// same.
async fn admit_unloaded(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
) -> Result<OrderId, BuyError> {
    // From memory (a second old at most): the preload reads the row again under its lock.
    let Some(v) = catalog::voucher(core, voucher).await? else {
        count("not_found");
        return Err(BuyError::NotFound);
    };
    if v.window.ends_at() <= Utc::now() {
        return match store::orders::written_for(&core.db, voucher, shopper)
            .await
            .map_err(Backend::from)?
        {
            Some(order) => {
                count("already_bought");
                Err(BuyError::AlreadyBought(order))
            }
            None => {
                count("ended");
                Err(BuyError::Ended)
            }
        };
    }
    catalog::preload(core, &v).await?;
    let outcome = core.admissions.admit(voucher, shopper).await?;
    decided(core, voucher, outcome)
}

/// A buy on a sale this instance saw refuse everyone a moment ago: no admission script. A
/// shopper holding an order on it still learns that order, so a retried buy keeps its answer:
/// from the sale's buyers in memory once they are read (no Redis call at all), until then from
/// one `HGET`, which also starts that read.
async fn refused_from_memory(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
    refusal: Refusal,
) -> Result<OrderId, BuyError> {
    let held = match core.sold_out.lookup(voucher, shopper) {
        Known::Bought(order) => Some(order),
        Known::NotBought => None,
        Known::Unknown => {
            core.sold_out.read_later((&core.redis, &core.keys), voucher);
            let mut redis = core.redis.clone();
            let hex: Option<String> = redis
                .hget(core.keys.voucher(voucher).buyers, shopper.get())
                .await?;
            hex.and_then(|hex| OrderId::from_redis_hex(&hex).ok())
        }
    };
    if let Some(order) = held {
        count("already_bought");
        return Err(BuyError::AlreadyBought(order));
    }
    let (label, err) = match refusal {
        Refusal::SoldOut => ("sold_out", BuyError::SoldOut),
        Refusal::Ended => ("ended", BuyError::Ended),
    };
    count(label);
    Err(err)
}

/// The outcomes `seckill_admissions_total` is labelled with.
const OUTCOMES: [&str; 11] = [
    "admitted",
    "sold_out",
    "already_bought",
    "not_started",
    "ended",
    "ids_exhausted",
    "rate_limited",
    "draw_pending",
    "not_found",
    "unavailable",
    "error",
];

/// One more buy with this outcome in `seckill_admissions_total`. Each outcome's counter is
/// looked up in the recorder once and kept: `counter!` with a label copies the label into a new
/// key on every call, which a rush's refusals paid for each (issue #53). The recorder is
/// installed before the instance serves, so no buy comes before it.
fn count(outcome: &'static str) {
    static COUNTERS: [OnceLock<Counter>; OUTCOMES.len()] =
        [const { OnceLock::new() }; OUTCOMES.len()];
    match OUTCOMES.iter().position(|o| *o == outcome) {
        Some(i) => COUNTERS[i]
            .get_or_init(|| metrics::counter!("seckill_admissions_total", "outcome" => outcome))
            .increment(1),
        None => metrics::counter!("seckill_admissions_total", "outcome" => outcome).increment(1),
    }
}
