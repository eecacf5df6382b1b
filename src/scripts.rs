//! The Lua scripts (`lua/`) and the decoding of their replies, in one place.
//!
//! Each script's return codes are decoded here into a Rust enum; a code not listed is an
//! [`ScriptError::UnknownReply`], never a silent default. `redis::Script` runs `EVALSHA` and
//! falls back to loading the script on `NOSCRIPT`.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use crate::{
    domain::{OrderId, UserId, VoucherId},
    keys::{Keys, LockKeys, VoucherKeys, ORDER_GROUP},
};

const ORDER_ID_LIB: &str = include_str!("../lua/order_id.lua");

/// `lua/admit.lua` as written; it calls `next_order_id` from the ID library.
pub const ADMIT_BODY: &str = include_str!("../lua/admit.lua");
/// The admission script as Redis runs it: the ID library, then `lua/admit.lua`.
pub static ADMIT_SOURCE: LazyLock<String> = LazyLock::new(|| [ORDER_ID_LIB, ADMIT_BODY].concat());
static ADMIT: LazyLock<Script> = LazyLock::new(|| Script::new(&ADMIT_SOURCE));
static NEXT_ORDER_ID: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&[ORDER_ID_LIB, include_str!("../lua/next_order_id.lua")].concat())
});
static PRELOAD: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/preload.lua")));
static SETTLE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../lua/settle.lua")));

/// A script failed to run, or answered something this code does not know.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("script {script} returned an unknown reply {reply:?}")]
    UnknownReply {
        script: &'static str,
        reply: Vec<i64>,
    },
}

/// What the admission script decided for one purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionOutcome {
    /// Stock taken, buyer recorded, order enqueued under this ID.
    Admitted(OrderId),
    SoldOut,
    AlreadyBought,
    NotStarted,
    Ended,
    /// Redis holds no sale for this voucher (never preloaded, or Redis lost it).
    NotLoaded,
    /// The UTC day's 2^32 order IDs are spent.
    IdsExhausted,
    /// The shopper made more attempts on this sale this second than allowed.
    RateLimited,
}

impl AdmissionOutcome {
    /// Decodes `lua/admit.lua`'s reply.
    pub fn decode(reply: &[i64]) -> Result<Self, ScriptError> {
        let unknown = || ScriptError::UnknownReply {
            script: "admit",
            reply: reply.to_vec(),
        };
        Ok(match reply {
            [0, secs, seq] => Self::Admitted(order_id(*secs, *seq).ok_or_else(unknown)?),
            [1] => Self::SoldOut,
            [2] => Self::AlreadyBought,
            [3] => Self::NotStarted,
            [4] => Self::Ended,
            [5] => Self::NotLoaded,
            [6] => Self::IdsExhausted,
            [7] => Self::RateLimited,
            _ => return Err(unknown()),
        })
    }
}

fn order_id(secs: i64, seq: i64) -> Option<OrderId> {
    OrderId::from_parts(u32::try_from(secs).ok()?, u32::try_from(seq).ok()?).ok()
}

/// Runs the admission script for `user` buying `voucher`, allowing `attempts_per_second`
/// attempts per shopper and sale.
pub async fn admit<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    user: UserId,
    attempts_per_second: u32,
) -> Result<AdmissionOutcome, ScriptError> {
    let k = keys.voucher(voucher);
    let reply: Vec<i64> = ADMIT
        .key(&k.sale)
        .key(&k.stock)
        .key(&k.buyers)
        .key(&k.queued)
        .key(&k.orders)
        .key(k.rate_of(user))
        .arg(user.get())
        .arg(keys.order_counter_prefix())
        .arg(voucher.get())
        .arg(attempts_per_second)
        .invoke_async(conn)
        .await?;
    AdmissionOutcome::decode(&reply)
}

/// Why no order ID could be drawn.
#[derive(Debug, thiserror::Error)]
pub enum NextIdError {
    #[error(transparent)]
    Script(#[from] ScriptError),
    #[error("the day's 2^32 order IDs are exhausted")]
    Exhausted,
}

/// Draws one order ID on its own (the admission script draws its own inside).
pub async fn next_order_id<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
) -> Result<OrderId, NextIdError> {
    let reply: Vec<i64> = NEXT_ORDER_ID
        .arg(keys.order_counter_prefix())
        .invoke_async(conn)
        .await
        .map_err(ScriptError::from)?;
    let unknown = || ScriptError::UnknownReply {
        script: "next_order_id",
        reply: reply.clone(),
    };
    match reply.as_slice() {
        [0, secs, seq] => Ok(order_id(*secs, *seq).ok_or_else(unknown)?),
        [1] => Err(NextIdError::Exhausted),
        _ => Err(unknown().into()),
    }
}

/// What a preload did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreloadOutcome {
    /// The stock was absent and is now this many units.
    Rebuilt { stock: i64 },
    /// The stock was live already and was left alone (the window was refreshed).
    AlreadyLoaded { stock: i64 },
}

/// What the preload script needs to know from PostgreSQL.
#[derive(Debug, Clone)]
pub struct PreloadInput<'a> {
    pub begins_ms: i64,
    pub ends_ms: i64,
    pub initial_stock: i64,
    /// Units PostgreSQL has not sold.
    pub db_stock: i64,
    /// Users holding written orders.
    pub buyers: &'a [UserId],
}

/// Runs `lua/preload.lua` for one voucher.
pub async fn preload<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    input: &PreloadInput<'_>,
) -> Result<PreloadOutcome, ScriptError> {
    let mut call = PRELOAD.key(&keys.sale);
    call.key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .arg(input.begins_ms)
        .arg(input.ends_ms)
        .arg(input.initial_stock)
        .arg(input.db_stock);
    for b in input.buyers {
        call.arg(b.get());
    }
    let reply: Vec<i64> = call.invoke_async(conn).await?;
    match reply.as_slice() {
        [1, stock] => Ok(PreloadOutcome::Rebuilt { stock: *stock }),
        [0, stock] => Ok(PreloadOutcome::AlreadyLoaded { stock: *stock }),
        _ => Err(ScriptError::UnknownReply {
            script: "preload",
            reply,
        }),
    }
}

/// How the worker settles one order in Redis after its PostgreSQL commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// The row is written: forget the queued entry.
    Written,
    /// Rejected; give back the buyer slot and the unit (poisoned entry, unknown voucher).
    GiveBack,
    /// Rejected because PostgreSQL had no stock left: release the buyer, but do not return a
    /// unit that PostgreSQL would refuse again.
    ReleaseBuyerOnly,
    /// Rejected because the shopper already holds a written order: return the unit, keep the
    /// buyer recorded.
    ReturnStockOnly,
    /// Gave up after too many deliveries: give back, and copy to the dead-letter stream.
    DeadLetter,
}

impl Settlement {
    /// The flags `lua/settle.lua` reads: 1 release buyer, 2 return stock, 4 dead-letter.
    fn flags(self) -> u8 {
        match self {
            Self::Written => 0,
            Self::ReleaseBuyerOnly => 1,
            Self::ReturnStockOnly => 2,
            Self::GiveBack => 3,
            Self::DeadLetter => 7,
        }
    }
}

/// One entry to settle.
#[derive(Debug, Clone)]
pub struct SettleEntry<'a> {
    pub entry_id: &'a str,
    pub order: OrderId,
    pub user: UserId,
    pub settlement: Settlement,
    pub reason: &'a str,
}

/// Runs `lua/settle.lua` on one voucher's entries; returns how many were settled.
pub async fn settle<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    entries: &[SettleEntry<'_>],
) -> Result<usize, ScriptError> {
    if entries.is_empty() {
        return Ok(0);
    }
    let mut call = SETTLE.key(&keys.orders);
    call.key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.dead)
        .arg(ORDER_GROUP);
    for e in entries {
        call.arg(e.entry_id)
            .arg(e.order.to_redis_hex())
            .arg(e.user.get())
            .arg(e.settlement.flags())
            .arg(e.reason);
    }
    let settled: i64 = call.invoke_async(conn).await?;
    usize::try_from(settled).map_err(|_| ScriptError::UnknownReply {
        script: "settle",
        reply: vec![settled],
    })
}

static RETIRE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("../lua/retire.lua")));

/// What `lua/retire.lua` did with a finished sale's Redis state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retirement {
    /// Deleted: the sale ended past the grace period and nothing was left to write.
    Retired,
    /// The sale (plus grace) ends this many milliseconds from now.
    NotDue { in_ms: i64 },
    /// Orders are still queued or on the stream; the worker has not finished.
    StillQueued { orders: i64 },
    /// There was no sale state to retire.
    Absent,
}

/// Runs `lua/retire.lua` on one voucher's keys.
pub async fn retire<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &VoucherKeys,
    grace_ms: u64,
) -> Result<Retirement, ScriptError> {
    let reply: Vec<i64> = RETIRE
        .key(&keys.sale)
        .key(&keys.stock)
        .key(&keys.buyers)
        .key(&keys.queued)
        .key(&keys.orders)
        .arg(grace_ms)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0] => Ok(Retirement::Retired),
        [1, ms] => Ok(Retirement::NotDue { in_ms: *ms }),
        [2, n] => Ok(Retirement::StillQueued { orders: *n }),
        [3] => Ok(Retirement::Absent),
        _ => Err(ScriptError::UnknownReply {
            script: "retire",
            reply,
        }),
    }
}

static LOCK_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/lock_acquire.lua")));
static LOCK_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/lock_release.lua")));
static LOCK_RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/lock_renew.lua")));

/// What one node answered to an acquire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockGrant {
    /// Granted (or re-entered) with this fencing token.
    Granted { fence: i64 },
    /// Held by another owner for this many more milliseconds (-1: no expiry, -2: just gone).
    Held { ttl_ms: i64 },
}

/// Runs `lua/lock_acquire.lua`.
pub async fn lock_acquire<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
) -> Result<LockGrant, ScriptError> {
    let reply: Vec<i64> = LOCK_ACQUIRE
        .key(&keys.lock)
        .key(&keys.fence)
        .arg(owner)
        .arg(lease_ms)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0, fence] => Ok(LockGrant::Granted { fence: *fence }),
        [1, ttl_ms] => Ok(LockGrant::Held { ttl_ms: *ttl_ms }),
        _ => Err(ScriptError::UnknownReply {
            script: "lock_acquire",
            reply,
        }),
    }
}

/// What one node answered to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockRelease {
    Freed,
    /// Re-entered holds remain.
    StillHeld {
        count: i64,
    },
    /// The caller does not own the lock (it expired, maybe someone else holds it now).
    NotOwner,
}

/// Runs `lua/lock_release.lua`.
pub async fn lock_release<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
) -> Result<LockRelease, ScriptError> {
    let reply: Vec<i64> = LOCK_RELEASE
        .key(&keys.lock)
        .arg(owner)
        .arg(lease_ms)
        .arg(&keys.channel)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0] => Ok(LockRelease::Freed),
        [1, count] => Ok(LockRelease::StillHeld { count: *count }),
        [2] => Ok(LockRelease::NotOwner),
        _ => Err(ScriptError::UnknownReply {
            script: "lock_release",
            reply,
        }),
    }
}

/// Runs `lua/lock_renew.lua`; `true` when the lease was extended.
pub async fn lock_renew<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
) -> Result<bool, ScriptError> {
    let reply: i64 = LOCK_RENEW
        .key(&keys.lock)
        .arg(owner)
        .arg(lease_ms)
        .invoke_async(conn)
        .await?;
    match reply {
        1 => Ok(true),
        0 => Ok(false),
        _ => Err(ScriptError::UnknownReply {
            script: "lock_renew",
            reply: vec![reply],
        }),
    }
}

static VERIFY_CODE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../lua/verify_code.lua")));

/// What `lua/verify_code.lua` decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeCheck {
    Accepted,
    Wrong,
    /// Expired, never sent, or out of attempts.
    NoCode,
}

/// Checks a sign-in code stored at `key`.
pub async fn verify_code<C: ConnectionLike + Send>(
    conn: &mut C,
    key: &str,
    code: &str,
    max_attempts: u32,
) -> Result<CodeCheck, ScriptError> {
    let reply: i64 = VERIFY_CODE
        .key(key)
        .arg(code)
        .arg(max_attempts)
        .invoke_async(conn)
        .await?;
    match reply {
        0 => Ok(CodeCheck::Accepted),
        1 => Ok(CodeCheck::Wrong),
        2 => Ok(CodeCheck::NoCode),
        _ => Err(ScriptError::UnknownReply {
            script: "verify_code",
            reply: vec![reply],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_admission_code_decodes() {
        let id = OrderId::from_parts(5, 6).expect("fits");
        assert_eq!(
            AdmissionOutcome::decode(&[0, 5, 6]).ok(),
            Some(AdmissionOutcome::Admitted(id))
        );
        let cases = [
            (1, AdmissionOutcome::SoldOut),
            (2, AdmissionOutcome::AlreadyBought),
            (3, AdmissionOutcome::NotStarted),
            (4, AdmissionOutcome::Ended),
            (5, AdmissionOutcome::NotLoaded),
            (6, AdmissionOutcome::IdsExhausted),
            (7, AdmissionOutcome::RateLimited),
        ];
        for (code, outcome) in cases {
            assert_eq!(AdmissionOutcome::decode(&[code]).ok(), Some(outcome));
        }
    }

    #[test]
    fn unknown_codes_are_errors() {
        for reply in [
            &[8][..],
            &[],
            &[0],
            &[0, 1],
            &[1, 2],
            &[0, -1, 2],
            &[0, 1 << 31, 1],
        ] {
            assert!(
                matches!(
                    AdmissionOutcome::decode(reply),
                    Err(ScriptError::UnknownReply { .. })
                ),
                "{reply:?} decoded"
            );
        }
    }

    #[test]
    fn settlement_flags_match_the_script() {
        assert_eq!(Settlement::Written.flags(), 0);
        assert_eq!(Settlement::DeadLetter.flags() & 4, 4);
        assert_eq!(Settlement::ReleaseBuyerOnly.flags() & 2, 0);
        assert_eq!(Settlement::ReturnStockOnly.flags() & 1, 0);
    }
}
