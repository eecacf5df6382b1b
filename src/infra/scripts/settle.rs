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
    /// Nothing: the sale was not reconciled since its Redis master changed.
    SaleUnreconciled,
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
            .arg(&e.reason);
    }
    let settled: i64 = call.invoke_async(conn).await?;
    if settled == -1 {
        return Ok(Settled::SaleUnreconciled);
    }
    usize::try_from(settled)
        .map(Settled::Entries)
        .map_err(|_| Backend::unknown_reply("settle", &[settled]))
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
