//! `lua/admit.lua`: the one-round-trip admission of a purchase.

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script, ScriptInvocation};

use super::{eval_then_wait, order_id, Backend, CounterDay, MASTER_LIB, ORDER_ID_LIB, TAKE_LIB};
use crate::{
    domain::{OrderId, Shard, UserId, VoucherId},
    infra::{durability::ReplicaWait, keys::Keys},
};

/// `lua/admit.lua` as written; it calls `next_order_id` from the ID library and `master_id`.
const ADMIT_BODY: &str = include_str!("../../../lua/admit.lua");
/// The admission script as Redis runs it: the master and ID libraries, then `lua/admit.lua`.
pub static ADMIT_SOURCE: LazyLock<String> =
    LazyLock::new(|| [MASTER_LIB, ORDER_ID_LIB, TAKE_LIB, ADMIT_BODY].concat());
static ADMIT: LazyLock<Script> = LazyLock::new(|| Script::new(&ADMIT_SOURCE));

/// `lua/admit.lua`'s reply codes: per shopper `{code, a, b}`, or one code for the whole batch.
mod code {
    pub const ADMITTED: i64 = 0;
    pub const SOLD_OUT: i64 = 1;
    pub const ALREADY_BOUGHT: i64 = 2;
    pub const NOT_STARTED: i64 = 3;
    pub const ENDED: i64 = 4;
    /// The whole batch: no sale in Redis.
    pub const NOT_LOADED: i64 = 5;
    pub const IDS_EXHAUSTED: i64 = 6;
    pub const RATE_LIMITED: i64 = 7;
    /// The whole batch: the Redis clock is on another day, named after it.
    pub const WRONG_DAY: i64 = 8;
    /// The whole batch: the sale was not reconciled under this Redis master.
    pub const UNRECONCILED: i64 = 9;
    pub const DRAW_PENDING: i64 = 10;
}

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
    /// A draw sale before its draw, or while its units go to the entrants by rank.
    DrawPending,
    /// The Redis clock is on this other day than the counter named (around midnight): nothing
    /// was written; [`admit_batch`] retries once with that day's counter.
    WrongDay(CounterDay),
    /// The sale's state was not checked against PostgreSQL since its Redis master changed (a
    /// failover, a restart): nothing was written; reconcile the sale, then decide again.
    Unreconciled,
}

impl AdmissionOutcome {
    /// Decodes `lua/admit.lua`'s reply to a batch of `n` shoppers: one outcome each, in order.
    /// A refusal of the whole batch (not loaded, another day) is every shopper's outcome.
    pub fn decode_batch(reply: &[i64], n: usize) -> Result<Vec<Self>, Backend> {
        let unknown = || Backend::unknown_reply("admit", reply);
        match reply {
            [code::NOT_LOADED] => Ok(vec![Self::NotLoaded; n]),
            [code::UNRECONCILED] => Ok(vec![Self::Unreconciled; n]),
            [code::WRONG_DAY, day] => {
                let day = CounterDay::from_days(*day).ok_or_else(unknown)?;
                Ok(vec![Self::WrongDay(day); n])
            }
            [code::ADMITTED, triples @ ..] if triples.len() == 3 * n => triples
                .chunks_exact(3)
                .map(|t| Self::decode_one(t).ok_or_else(unknown))
                .collect(),
            _ => Err(unknown()),
        }
    }

    /// One shopper's triple `{code, a, b}`.
    fn decode_one(triple: &[i64]) -> Option<Self> {
        Some(match *triple {
            [code::ADMITTED, secs, seq] => Self::Admitted(order_id(secs, seq)?),
            [code::SOLD_OUT, 0, 0] => Self::SoldOut,
            [code::ALREADY_BOUGHT, secs, seq] => Self::AlreadyBought(order_id(secs, seq)?),
            [code::NOT_STARTED, 0, 0] => Self::NotStarted,
            [code::ENDED, 0, 0] => Self::Ended,
            [code::IDS_EXHAUSTED, 0, 0] => Self::IdsExhausted,
            [code::RATE_LIMITED, 0, 0] => Self::RateLimited,
            [code::DRAW_PENDING, 0, 0] => Self::DrawPending,
            _ => return None,
        })
    }

    /// The error for a batch the script refused twice for the day: the Redis clock crossed
    /// midnight between the two calls.
    pub fn clock_jumped(day: CounterDay) -> Backend {
        Backend::unknown_reply("admit", &[code::WRONG_DAY, day.get()])
    }
}

/// Runs the admission script for `user` buying `voucher` (a batch of one).
#[cfg(feature = "testing")]
pub async fn admit<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    user: UserId,
    attempts_per_second: u32,
) -> Result<AdmissionOutcome, Backend> {
    let outcomes = admit_batch(conn, keys, voucher, &[user], attempts_per_second, None).await?;
    outcomes
        .into_iter()
        .next()
        .ok_or_else(|| Backend::unknown_reply("admit", &[]))
}

/// Decides the purchases of `users` on `voucher`, in order, in one script call, allowing
/// `attempts_per_second` attempts per shopper and sale: one outcome per user. Across midnight
/// (the app's and Redis's clocks on different days) the script names its day and the batch is
/// run once more with that day's counter. With `replicas`, the call is followed by `WAIT` on the
/// same connection: fewer replicas than asked for holding the batch in time is
/// [`Backend::NotReplicated`] for the whole batch.
pub async fn admit_batch<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    users: &[UserId],
    attempts_per_second: u32,
    replicas: Option<ReplicaWait>,
) -> Result<Vec<AdmissionOutcome>, Backend> {
    let call = Call {
        keys,
        voucher,
        users,
        attempts_per_second,
        replicas,
    };
    let first = call.run(conn, CounterDay::today()).await?;
    let Some(AdmissionOutcome::WrongDay(day)) = first.first().copied() else {
        return Ok(first);
    };
    let again = call.run(conn, day).await?;
    match again.first() {
        Some(AdmissionOutcome::WrongDay(other)) => Err(AdmissionOutcome::clock_jumped(*other)),
        _ => Ok(again),
    }
}

#[cfg(feature = "testing")]
/// One run of the admission script with the counter of `day` (no retry).
pub async fn admit_on_day<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    user: UserId,
    attempts_per_second: u32,
    day: CounterDay,
) -> Result<AdmissionOutcome, Backend> {
    let outcomes =
        admit_batch_on_day(conn, keys, voucher, &[user], attempts_per_second, day).await?;
    outcomes
        .into_iter()
        .next()
        .ok_or_else(|| Backend::unknown_reply("admit", &[]))
}

#[cfg(feature = "testing")]
/// One run of the admission script for a batch with the counter of `day` (no retry, no wait).
pub async fn admit_batch_on_day<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &Keys,
    voucher: VoucherId,
    users: &[UserId],
    attempts_per_second: u32,
    day: CounterDay,
) -> Result<Vec<AdmissionOutcome>, Backend> {
    Call {
        keys,
        voucher,
        users,
        attempts_per_second,
        replicas: None,
    }
    .run(conn, day)
    .await
}

/// One batch's admission call, run with one day's counter.
struct Call<'a> {
    keys: &'a Keys,
    voucher: VoucherId,
    users: &'a [UserId],
    attempts_per_second: u32,
    replicas: Option<ReplicaWait>,
}

impl Call<'_> {
    async fn run<C: ConnectionLike + Send>(
        &self,
        conn: &mut C,
        day: CounterDay,
    ) -> Result<Vec<AdmissionOutcome>, Backend> {
        if self.users.is_empty() {
            return Ok(Vec::new());
        }
        let reply: Vec<i64> = match self.replicas {
            None => self.invocation(day).invoke_async(conn).await?,
            Some(wait) => self.run_then_wait(conn, day, wait).await?,
        };
        AdmissionOutcome::decode_batch(&reply, self.users.len())
    }

    /// Every key the script touches, then its arguments.
    fn keys_and_args(&self, day: CounterDay) -> (Vec<String>, Vec<i64>) {
        let k = self.keys.voucher(self.voucher);
        let shard = Shard::of_voucher(self.voucher);
        let mut keys = Vec::with_capacity(6 + self.users.len());
        keys.extend([
            k.sale.clone(),
            k.stock.clone(),
            k.buyers.clone(),
            k.queued.clone(),
            k.orders.clone(),
            day.counter(self.keys, shard),
        ]);
        keys.extend(self.users.iter().map(|user| k.rate_of(*user)));
        let mut args = Vec::with_capacity(4 + self.users.len());
        args.extend([
            day.get(),
            self.voucher.get(),
            i64::from(self.attempts_per_second),
            i64::from(shard.index()),
        ]);
        args.extend(self.users.iter().map(|user| user.get()));
        (keys, args)
    }

    /// The script call (`EVALSHA`, loading the script on `NOSCRIPT`).
    fn invocation(&self, day: CounterDay) -> ScriptInvocation<'static> {
        let (keys, args) = self.keys_and_args(day);
        let mut call = ADMIT.prepare_invoke();
        for key in &keys {
            call.key(key);
        }
        for arg in args {
            call.arg(arg);
        }
        call
    }

    /// The call followed by `WAIT` (see [`eval_then_wait`]).
    async fn run_then_wait<C: ConnectionLike + Send>(
        &self,
        conn: &mut C,
        day: CounterDay,
        wait: ReplicaWait,
    ) -> Result<Vec<i64>, Backend> {
        let (keys, args) = self.keys_and_args(day);
        eval_then_wait(conn, &ADMIT, &keys, &args, wait).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_admission_code_decodes_in_order() {
        let id = OrderId::from_parts(5, 6).expect("fits");
        let reply = [
            0, 0, 5, 6, 1, 0, 0, 2, 5, 6, 3, 0, 0, 4, 0, 0, 6, 0, 0, 7, 0, 0,
        ];
        assert_eq!(
            AdmissionOutcome::decode_batch(&reply, 7).ok(),
            Some(vec![
                AdmissionOutcome::Admitted(id),
                AdmissionOutcome::SoldOut,
                AdmissionOutcome::AlreadyBought(id),
                AdmissionOutcome::NotStarted,
                AdmissionOutcome::Ended,
                AdmissionOutcome::IdsExhausted,
                AdmissionOutcome::RateLimited,
            ])
        );
    }

    #[test]
    fn a_refusal_of_the_batch_is_every_shoppers_outcome() {
        assert_eq!(
            AdmissionOutcome::decode_batch(&[5], 3).ok(),
            Some(vec![AdmissionOutcome::NotLoaded; 3])
        );
        assert_eq!(
            AdmissionOutcome::decode_batch(&[9], 2).ok(),
            Some(vec![AdmissionOutcome::Unreconciled; 2])
        );
        assert_eq!(
            AdmissionOutcome::decode_batch(&[8, 20_000], 2).ok(),
            Some(vec![
                AdmissionOutcome::WrongDay(
                    CounterDay::from_days(20_000).expect("a day")
                );
                2
            ])
        );
    }

    #[test]
    fn unknown_codes_and_wrong_lengths_are_errors() {
        for (reply, n) in [
            (&[10][..], 1),
            (&[9, 0], 1),
            (&[8], 1),
            (&[], 1),
            (&[0], 1),
            (&[0, 1, 0, 0], 2),
            (&[0, 1, 0, 0, 1, 0, 0], 1),
            (&[0, 1, 2, 0], 1),
            (&[0, 5, 0, 0], 1),
            (&[0, 8, 0, 0], 1),
            (&[0, 0, -1, 2], 1),
            (&[0, 0, 1 << 31, 1], 1),
        ] {
            assert!(
                matches!(
                    AdmissionOutcome::decode_batch(reply, n),
                    Err(Backend::UnknownReply { .. })
                ),
                "{reply:?} decoded for {n}"
            );
        }
    }
}
