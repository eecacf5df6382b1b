//! `lua/preload.lua`: loads a voucher's sale into Redis, restores it after a loss, or
//! reconciles it after its Redis master changed.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{Backend, MASTER_LIB};
use crate::{
    domain::{OrderId, UserId},
    infra::keys::VoucherKeys,
};

static PRELOAD: LazyLock<Script> =
    LazyLock::new(|| Script::new(&[MASTER_LIB, include_str!("../../../lua/preload.lua")].concat()));

/// What the script is asked to do with a sale whose stock is present (an absent one is rebuilt
/// by `Load` and `Reconcile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreloadMode {
    /// Write nothing; say whether the sale was checked under this master.
    Check,
    /// Refresh the window of a sale checked under this master.
    Load,
    /// `Load` with a snapshot too light to rebuild from (the stock and the moves and buyers
    /// left out, read while the stock was present): a stock gone meanwhile answers `Absent`
    /// and nothing is written, for a `Load` with the full snapshot.
    Refresh,
    /// Rebuild a sale not checked under this master from the PostgreSQL snapshot.
    Reconcile,
}

impl PreloadMode {
    fn arg(self) -> &'static str {
        match self {
            Self::Check => "check",
            Self::Load => "load",
            Self::Refresh => "refresh",
            Self::Reconcile => "reconcile",
        }
    }
}

/// What a preload did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreloadOutcome {
    /// The stock was absent (or not checked under this master) and is now this many units.
    Rebuilt { stock: i64 },
    /// The stock was live and checked under this master, and was left alone.
    AlreadyLoaded { stock: i64 },
    /// The stock is live but was not checked under this master (a failover, a restart): nothing
    /// was written; a reconciliation is due.
    MasterChanged,
    /// (`Check`, `Refresh`) Redis holds no stock for the sale: nothing was written.
    Absent,
}

/// What the preload script needs to know from PostgreSQL.
#[derive(Debug, Clone)]
pub struct PreloadInput<'a> {
    pub begins_ms: i64,
    pub ends_ms: i64,
    /// The stock the sale offers: initial plus added.
    pub total_stock: i64,
    /// Units PostgreSQL has not sold.
    pub db_stock: i64,
    /// The keys of every stock move PostgreSQL holds for the sale (read with `db_stock`).
    pub moves: &'a [String],
    /// Users holding live written orders, with those orders.
    pub buyers: &'a [(UserId, OrderId)],
    /// Written orders cancelled since: written (no unit of the remainder is theirs) and
    /// nobody's buyer slot, even while still queued here.
    pub cancelled: &'a [OrderId],
    /// A draw sale's entries opening (ms); `None` for first come.
    pub entries_ms: Option<i64>,
    /// A recorded draw's (cursor, entrants) by PostgreSQL (read with the snapshot).
    pub draw: Option<(i64, i64)>,
}

/// Runs `lua/preload.lua` for one voucher.
pub async fn preload<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    mode: PreloadMode,
    input: &PreloadInput<'_>,
) -> Result<PreloadOutcome, Backend> {
    let mut call = PRELOAD.key(&keys.sale);
    call.key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.moves)
        .arg(input.begins_ms)
        .arg(input.ends_ms)
        .arg(input.total_stock)
        .arg(input.db_stock)
        .arg(mode.arg())
        .arg(input.entries_ms.map_or(String::new(), |ms| ms.to_string()))
        .arg(input.draw.map_or(String::new(), |(c, _)| c.to_string()))
        .arg(input.draw.map_or(String::new(), |(_, e)| e.to_string()))
        .arg(input.moves.len());
    for key in input.moves {
        call.arg(key);
    }
    for (user, order) in input.buyers {
        call.arg(user.get()).arg(order.to_redis_hex());
    }
    for order in input.cancelled {
        call.arg("").arg(order.to_redis_hex());
    }
    let reply: Vec<i64> = call.invoke_async(conn).await?;
    match reply.as_slice() {
        [1, stock] => Ok(PreloadOutcome::Rebuilt { stock: *stock }),
        [0, stock] => Ok(PreloadOutcome::AlreadyLoaded { stock: *stock }),
        [2] => Ok(PreloadOutcome::MasterChanged),
        [3] if matches!(mode, PreloadMode::Check | PreloadMode::Refresh) => {
            Ok(PreloadOutcome::Absent)
        }
        _ => Err(Backend::unknown_reply("preload", &reply)),
    }
}
