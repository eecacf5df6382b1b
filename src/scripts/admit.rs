//! `lua/admit.lua`: the one-round-trip admission of a purchase.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::{order_id, CounterDay, ScriptError, ORDER_ID_LIB};
use crate::{
    domain::{OrderId, Shard, UserId, VoucherId},
    keys::Keys,
};

/// `lua/admit.lua` as written; it calls `next_order_id` from the ID library.
pub const ADMIT_BODY: &str = include_str!("../../lua/admit.lua");
/// The admission script as Redis runs it: the ID library, then `lua/admit.lua`.
pub static ADMIT_SOURCE: LazyLock<String> = LazyLock::new(|| [ORDER_ID_LIB, ADMIT_BODY].concat());
static ADMIT: LazyLock<Script> = LazyLock::new(|| Script::new(&ADMIT_SOURCE));

/// What the admission script decided for one purchase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionOutcome {
    /// Stock taken, buyer recorded, order enqueued under this ID.
    Admitted(OrderId),
    SoldOut,
    /// The shopper already holds this order on this sale (a repeated buy).
    AlreadyBought(OrderId),
    NotStarted,
    Ended,
    /// Redis holds no sale for this voucher (never preloaded, or Redis lost it).
    NotLoaded,
    /// The UTC day's 2^32 order IDs are spent.
    IdsExhausted,
    /// The shopper made more attempts on this sale this second than allowed.
    RateLimited,
    /// The Redis clock is on this other day than the counter named (around midnight): nothing
    /// was written; [`admit`] retries once with that day's counter.
    WrongDay(CounterDay),
}

impl AdmissionOutcome {
    /// Decodes `lua/admit.lua`'s reply.
    pub fn decode(reply: &[i64]) -> Result<Self, ScriptError> {
        let unknown = || ScriptError::unknown("admit", reply);
        Ok(match reply {
            [0, secs, seq] => Self::Admitted(order_id(*secs, *seq).ok_or_else(unknown)?),
            [1] => Self::SoldOut,
            [2, secs, seq] => Self::AlreadyBought(order_id(*secs, *seq).ok_or_else(unknown)?),
            [3] => Self::NotStarted,
            [4] => Self::Ended,
            [5] => Self::NotLoaded,
            [6] => Self::IdsExhausted,
            [7] => Self::RateLimited,
            [8, day] => Self::WrongDay(CounterDay::from_days(*day)),
            _ => return Err(unknown()),
        })
    }
}

/// Runs the admission script for `user` buying `voucher`, allowing `attempts_per_second`
/// attempts per shopper and sale. Across midnight (the app's and Redis's clocks on different
/// days) the script names its day and is run once more with that day's counter.
pub async fn admit<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    user: UserId,
    attempts_per_second: u32,
) -> Result<AdmissionOutcome, ScriptError> {
    let first = admit_on_day(
        conn,
        keys,
        voucher,
        user,
        attempts_per_second,
        CounterDay::today(),
    )
    .await?;
    match first {
        AdmissionOutcome::WrongDay(day) => {
            match admit_on_day(conn, keys, voucher, user, attempts_per_second, day).await? {
                AdmissionOutcome::WrongDay(again) => {
                    Err(ScriptError::unknown("admit", &[8, again.get()]))
                }
                outcome => Ok(outcome),
            }
        }
        outcome => Ok(outcome),
    }
}

/// One run of the admission script with the counter of `day` (no retry).
pub async fn admit_on_day<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    user: UserId,
    attempts_per_second: u32,
    day: CounterDay,
) -> Result<AdmissionOutcome, ScriptError> {
    let k = keys.voucher(voucher);
    let shard = Shard::of_voucher(voucher);
    let reply: Vec<i64> = ADMIT
        .key(&k.sale)
        .key(&k.stock)
        .key(&k.buyers)
        .key(&k.queued)
        .key(&k.orders)
        .key(k.rate_of(user))
        .key(day.counter(keys, shard))
        .arg(user.get())
        .arg(day.get())
        .arg(voucher.get())
        .arg(attempts_per_second)
        .arg(shard.index())
        .invoke_async(conn)
        .await?;
    AdmissionOutcome::decode(&reply)
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
        assert_eq!(
            AdmissionOutcome::decode(&[2, 5, 6]).ok(),
            Some(AdmissionOutcome::AlreadyBought(id))
        );
        let cases = [
            (1, AdmissionOutcome::SoldOut),
            (3, AdmissionOutcome::NotStarted),
            (4, AdmissionOutcome::Ended),
            (5, AdmissionOutcome::NotLoaded),
            (6, AdmissionOutcome::IdsExhausted),
            (7, AdmissionOutcome::RateLimited),
        ];
        assert_eq!(
            AdmissionOutcome::decode(&[8, 20_000]).ok(),
            Some(AdmissionOutcome::WrongDay(CounterDay::from_days(20_000)))
        );
        for (code, outcome) in cases {
            assert_eq!(AdmissionOutcome::decode(&[code]).ok(), Some(outcome));
        }
    }

    #[test]
    fn unknown_codes_are_errors() {
        for reply in [
            &[9][..],
            &[8],
            &[],
            &[0],
            &[0, 1],
            &[1, 2],
            &[2],
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
}
