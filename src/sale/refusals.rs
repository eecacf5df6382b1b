//! Sales that refuse every buyer for now, remembered per instance (design.md §8, decision 17).
//!
//! A sale whose script said sold out or ended is refused from memory for
//! `SECKILL_SOLD_OUT_TTL_MS`; a unit coming back on sale clears it on this instance at once and
//! on the others by a pub/sub message ([`super::announce_stock_back`], the subscription in
//! [`crate::jobs`]). A shopper holding an order still learns it, from the sale's buyers read
//! once ([`super::sold_out`]) or, until they are, one `HGET` of the buyer (not the admission
//! script), so a retried buy keeps its answer.

use crate::{domain::VoucherId, infra::ttl_map::TtlMap};

/// Why a sale refuses every buyer for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    SoldOut,
    Ended,
}

/// Sales this instance knows refuse every buyer (until a unit comes back, or the memory
/// expires).
pub type Refusals = TtlMap<VoucherId, Refusal>;
