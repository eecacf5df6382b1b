//! The buyers of a sale this instance answers from memory (issue #25 point 2, decision 29).
//!
//! Once a sale refuses everyone here (sold out or ended, [`super::refusals`]), its buyers are
//! final until a unit comes back, and a unit coming back is announced to every instance
//! ([`super::announce_stock_back`]), which forgets them. So the instance reads the sale's
//! buyers once (`HSCAN` in pages, in the background: Redis is never blocked by one big read)
//! and from then on tells each refused shopper their own order, or the refusal, with no Redis
//! call at all. Until the buyers are read, a refused buy asks Redis for its own buyer (`HGET`),
//! as before. What bounds a stale memory: a forget (any unit back, any resubscription) voids
//! the reads in flight, and `SECKILL_SOLD_OUT_BUYERS_MS` the memory itself.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex, PoisonError,
    },
    time::{Duration, Instant},
};

use crate::{
    domain::{OrderId, UserId, VoucherId},
    infra::{backend::Backend, keys::Keys, redis_conn::Redis},
};

/// Buyers read per `HSCAN` call.
const PAGE: usize = 1_000;

/// One sale's buyers and their orders, sorted by shopper: 16 bytes a buyer (15.3 MiB for a sale
/// of 1,000,000 units; a hash map would take about twice that), found by binary search.
type Orders = Box<[(i64, OrderId)]>;

enum Memory {
    /// A read is under way (one per sale).
    Reading,
    Read {
        at: Instant,
        orders: Arc<Orders>,
    },
}

/// The buyers of the sales refused here, read once per refusal.
pub struct SoldOutBuyers {
    sales: Mutex<HashMap<VoucherId, Memory>>,
    ttl: Duration,
    /// Owns the reads of a sale's buyers (the instance waits for them at shutdown).
    tasks: tokio_util::task::TaskTracker,
    /// Moves on with every forget: a read that began before one is not kept.
    generation: AtomicU64,
}

/// What memory says about one shopper of a refused sale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// Their order on this sale.
    Bought(OrderId),
    /// They hold none: the refusal stands.
    NotBought,
    /// The sale's buyers are not in memory (yet).
    Unknown,
}

impl SoldOutBuyers {
    pub fn new(ttl: Duration, tasks: tokio_util::task::TaskTracker) -> Self {
        Self {
            sales: Mutex::new(HashMap::new()),
            ttl,
            tasks,
            generation: AtomicU64::new(0),
        }
    }

    fn sales(&self) -> std::sync::MutexGuard<'_, HashMap<VoucherId, Memory>> {
        self.sales.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What memory says of `shopper` on `voucher`.
    pub fn lookup(&self, voucher: VoucherId, shopper: UserId) -> Known {
        match self.sales().get(&voucher) {
            Some(Memory::Read { at, orders }) if at.elapsed() < self.ttl => orders
                .binary_search_by_key(&shopper.get(), |(user, _)| *user)
                .ok()
                .and_then(|i| orders.get(i))
                .map_or(Known::NotBought, |(_, order)| Known::Bought(*order)),
            _ => Known::Unknown,
        }
    }

    /// Starts reading `voucher`'s buyers in the background, unless a read is under way or a
    /// fresh one is in memory.
    pub fn read_later(self: &Arc<Self>, (redis, keys): (&Redis, &Keys), voucher: VoucherId) {
        {
            let mut sales = self.sales();
            match sales.get(&voucher) {
                Some(Memory::Reading) => return,
                Some(Memory::Read { at, .. }) if at.elapsed() < self.ttl => return,
                _ => {}
            }
            sales.insert(voucher, Memory::Reading);
        }
        let (this, redis, key) = (
            Arc::clone(self),
            redis.clone(),
            keys.voucher(voucher).buyers,
        );
        let began = self.generation.load(Ordering::Acquire);
        self.tasks.spawn(async move {
            let read = read_buyers(redis, &key).await;
            let mut sales = this.sales();
            match read {
                Ok(orders) if this.generation.load(Ordering::Acquire) == began => {
                    sales.insert(
                        voucher,
                        Memory::Read {
                            at: Instant::now(),
                            orders: Arc::new(orders),
                        },
                    );
                }
                Ok(_) => {
                    sales.remove(&voucher);
                }
                Err(e) => {
                    tracing::warn!(%voucher, error = %e, "reading a sold-out sale's buyers");
                    sales.remove(&voucher);
                }
            }
        });
    }

    /// A unit of `voucher` came back: its buyers may change.
    pub fn forget(&self, voucher: VoucherId) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.sales().remove(&voucher);
    }

    /// [`Self::forget`], if anything of `voucher` is kept (a buy admitted here: the common case
    /// keeps nothing, and takes the lock only).
    pub fn forget_kept(&self, voucher: VoucherId) {
        let mut sales = self.sales();
        if sales.remove(&voucher).is_some() {
            self.generation.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Everything may have changed (a resubscription).
    pub fn forget_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.sales().clear();
    }

    /// Buyers kept in memory, over every sale (tests, the bench).
    pub fn kept(&self) -> usize {
        self.sales()
            .values()
            .map(|m| match m {
                Memory::Read { orders, .. } => orders.len(),
                Memory::Reading => 0,
            })
            .sum()
    }
}

/// `voucher`'s buyers hash, a page at a time.
async fn read_buyers(mut redis: Redis, key: &str) -> Result<Orders, Backend> {
    let mut orders = Vec::new();
    let mut cursor = 0_u64;
    loop {
        let (next, flat): (u64, Vec<String>) = redis::cmd("HSCAN")
            .arg(key)
            .arg(cursor)
            .arg("COUNT")
            .arg(PAGE)
            .query_async(&mut redis)
            .await?;
        for pair in flat.chunks_exact(2) {
            if let [user, order] = pair {
                if let (Ok(user), Ok(order)) = (user.parse::<i64>(), OrderId::from_redis_hex(order))
                {
                    orders.push((user, order));
                }
            }
        }
        if next == 0 {
            // HSCAN may return a field twice; a shopper holds one order per sale.
            orders.sort_unstable_by_key(|(user, _)| *user);
            orders.dedup_by_key(|(user, _)| *user);
            return Ok(orders.into_boxed_slice());
        }
        cursor = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buyer_takes_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<(i64, OrderId)>(), 16);
    }
}
