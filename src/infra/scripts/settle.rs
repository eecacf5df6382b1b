//! `lua/settle.lua`: takes written or refused orders off one voucher's queue, giving back what
//! each refusal's admission took.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{Backend, MASTER_LIB};
use crate::{
    domain::{OrderId, Settlement, UserId},
    infra::keys::{VoucherKeys, ORDER_GROUP},
};

static SETTLE: LazyLock<Script> =
    LazyLock::new(|| Script::new(&[MASTER_LIB, include_str!("../../../lua/settle.lua")].concat()));

/// What a settle did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// This many entries settled.
    Entries(usize),
    /// This many entries settled, one of them written after a rebuild of the sale that may not
    /// have counted it: the sale was marked unchecked, to be reconciled from PostgreSQL.
    SaleRebuiltSince(usize),
    /// Nothing: the sale was not reconciled since its Redis master changed.
    SaleUnreconciled,
    /// Nothing: Redis does not hold the sale, and a written order of the batch is not queued
    /// (a restore must read PostgreSQL, which holds it, first).
    SaleNotLoaded,
}

/// The flags `lua/settle.lua` reads: 1 release buyer, 2 return stock, 4 dead-letter.
fn flags(settlement: Settlement) -> u8 {
    match settlement {
        Settlement::Written => 0,
        Settlement::ReleaseBuyerOnly => 1,
        Settlement::ReturnStockOnly => 2,
        Settlement::GiveBack => 3,
        Settlement::DeadLetter => 7,
    }
}

/// One entry to settle.
#[derive(Debug, Clone)]
pub struct SettleEntry<'a> {
    pub entry_id: &'a str,
    pub order: OrderId,
    pub user: UserId,
    pub settlement: Settlement,
    /// Copied to the dead-letter stream beside a dead-lettered entry.
    pub reason: String,
    /// The sale's rebuild the entry was admitted under (`built`, take.lua).
    pub built: &'a str,
}

/// Runs `lua/settle.lua` on one voucher's entries.
pub async fn settle<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    entries: &[SettleEntry<'_>],
) -> Result<Settled, Backend> {
    if entries.is_empty() {
        return Ok(Settled::Entries(0));
    }
    let mut call = SETTLE.key(&keys.orders);
    call.key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.dead)
        .key(&keys.sale)
        .arg(ORDER_GROUP);
    for e in entries {
        call.arg(e.entry_id)
            .arg(e.order.to_redis_hex())
            .arg(e.user.get())
            .arg(flags(e.settlement))
            .arg(&e.reason)
            .arg(e.built);
    }
    let reply: Vec<i64> = call.invoke_async(conn).await?;
    let count = |n: i64| usize::try_from(n).map_err(|_| Backend::unknown_reply("settle", &reply));
    match reply[..] {
        [0, n] => Ok(Settled::Entries(count(n)?)),
        [1, n] => Ok(Settled::SaleRebuiltSince(count(n)?)),
        [2] => Ok(Settled::SaleUnreconciled),
        [3] => Ok(Settled::SaleNotLoaded),
        _ => Err(Backend::unknown_reply("settle", &reply)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settlement_flags_match_the_script() {
        assert_eq!(flags(Settlement::Written), 0);
        assert_eq!(flags(Settlement::DeadLetter) & 4, 4);
        assert_eq!(flags(Settlement::ReleaseBuyerOnly) & 2, 0);
        assert_eq!(flags(Settlement::ReturnStockOnly) & 1, 0);
        assert_eq!(flags(Settlement::GiveBack), 3);
    }
}
