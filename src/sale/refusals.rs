//! Sales that refuse every buyer for now, remembered per instance (design.md §8, decision 17).
//!
//! A sale whose script said sold out or ended is refused from memory for
//! `SECKILL_SOLD_OUT_TTL_MS`; a unit coming back on sale clears it on this instance at once and
//! on the others by a pub/sub message ([`announce_stock_back`] here, the subscription in
//! [`crate::jobs`]). A shopper holding an order still learns it, from the sale's buyers read
//! once ([`super::sold_out`]) or, until they are, one `HGET` of the buyer (not the admission
//! script), so a retried buy keeps its answer.

use redis::AsyncCommands;

use crate::{domain::VoucherId, infra::ttl_map::TtlMap, Core};

/// Why a sale refuses every buyer for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    SoldOut,
    Ended,
}

/// Sales this instance knows refuse every buyer (until a unit comes back, or the memory
/// expires).
pub type Refusals = TtlMap<VoucherId, Refusal>;

/// Announces that units of `voucher` came back on sale: this instance forgets the sale's
/// refusal at once, the others when the message reaches them. Best effort: a lost message
/// leaves the refusal to expire on its own.
pub async fn announce_stock_back(core: &Core, voucher: VoucherId) {
    core.refusals.remove(&voucher);
    core.sold_out.forget(voucher);
    core.catalog.forget_stock(voucher);
    let mut redis = core.redis.clone();
    let sent: Result<i64, _> = redis
        .publish(core.keys.stock_back_channel(), voucher.get())
        .await;
    if let Err(e) = sent {
        tracing::warn!(%voucher, error = %e, "announcing stock back; refusals expire on their own");
    }
}
