//! Shards: the 256 groups that vouchers' Redis keys and order-ID counters are split into
//! (design.md §3, §4).
//!
//! A voucher belongs to shard `id mod 256`. Every Redis key of a voucher, and the day counter
//! its order IDs are drawn from, carry the shard's hash tag `{s<k>}`, so the admission script
//! touches one Redis Cluster slot and draws its ID in the same round trip. An order ID's
//! sequence field is `shard (8 bits) | that shard's daily INCR (24 bits)`: IDs drawn on
//! different shards can never collide, and an ID says which shard holds its order.

use std::fmt;

use crate::{OrderId, VoucherId};

/// How many shards there are (one byte of the order ID's sequence).
pub const SHARD_COUNT: u16 = 256;
/// The largest per-shard daily sequence number (24 bits: 16,777,215 orders per shard per day).
pub const SHARD_SEQUENCE_MAX: u32 = (1 << 24) - 1;

/// One of the [`SHARD_COUNT`] shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard(u8);

impl Shard {
    pub fn new(index: u8) -> Self {
        Self(index)
    }

    /// The shard a voucher's keys live in.
    pub fn of_voucher(voucher: VoucherId) -> Self {
        // A voucher ID is positive, so the remainder is 0..=255 and the cast is lossless.
        Self((voucher.get() % i64::from(SHARD_COUNT)) as u8)
    }

    /// The shard an order ID was drawn on (the top byte of its sequence).
    pub fn of_order(order: OrderId) -> Self {
        Self((order.sequence() >> 24) as u8)
    }

    pub fn index(self) -> u8 {
        self.0
    }

    /// The sequence field of the `n`-th ID drawn on this shard in a day (`None` past the
    /// 24-bit range).
    pub fn sequence(self, n: u32) -> Option<u32> {
        (n <= SHARD_SEQUENCE_MAX).then(|| (u32::from(self.0) << 24) | n)
    }

    /// Every shard, in order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..=u8::MAX).map(Self)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_voucher_belongs_to_its_id_mod_256() {
        for (id, shard) in [(1, 1), (255, 255), (256, 0), (257, 1), (1_000_000, 64)] {
            let v = VoucherId::try_from(id).expect("id");
            assert_eq!(Shard::of_voucher(v).index(), shard, "voucher {id}");
        }
    }

    #[test]
    fn an_order_id_names_the_shard_it_was_drawn_on() {
        for k in [0u8, 1, 17, 255] {
            let shard = Shard::new(k);
            for n in [1, 2, SHARD_SEQUENCE_MAX] {
                let seq = shard.sequence(n).expect("in range");
                let id = OrderId::from_parts(12_345, seq).expect("fits");
                assert_eq!(Shard::of_order(id), shard);
                assert_eq!(id.sequence() & SHARD_SEQUENCE_MAX, n);
            }
        }
    }

    #[test]
    fn sequences_of_different_shards_never_collide() {
        let a = Shard::new(3).sequence(5).expect("in range");
        let b = Shard::new(4).sequence(5).expect("in range");
        assert_ne!(a, b);
        assert_eq!(Shard::new(3).sequence(SHARD_SEQUENCE_MAX + 1), None);
        assert_eq!(Shard::all().count(), usize::from(SHARD_COUNT));
    }
}
