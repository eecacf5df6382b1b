//! The Lua scripts (`lua/`), one wrapper per file, and the decoding of their replies.
//!
//! Each wrapper declares every key its script touches (so it runs on one Redis Cluster slot),
//! and decodes the script's reply into a Rust enum; a reply not listed is an
//! [`Backend::UnknownReply`](crate::infra::backend::Backend::UnknownReply), never a silent default. `redis::Script` runs `EVALSHA` and
//! falls back to loading the script on `NOSCRIPT`.

mod admit;
mod apply_move;
mod draw;
mod end_sale;
mod enter;
mod lock;
#[cfg(feature = "testing")]
mod order_id;
mod preload;
mod raise_counter;
mod retire;
mod revise;
mod settle;
mod verify_code;

#[cfg(feature = "testing")]
pub use admit::{admit, admit_batch_on_day, admit_on_day, ADMIT_SOURCE};
pub use admit::{admit_batch, AdmissionOutcome};
pub use apply_move::{apply_move, MoveApplied};
pub use draw::{draw_admit, draw_open, DrawAdmit, DrawOpen};
pub use end_sale::{end_sale, SaleEnd};
pub use enter::{enter_batch, EntryOutcome};
pub use lock::{lock_acquire, lock_release, lock_renew, LockGrant, LockRelease};
#[cfg(feature = "testing")]
pub use order_id::{next_order_id, NextIdError};

pub use preload::{preload, PreloadInput, PreloadMode, PreloadOutcome};
pub use raise_counter::raise_counter;
pub use retire::{retire, Retirement};
pub use revise::{revise, Revised, Revision};
pub use settle::{settle, SettleEntry, Settled};
pub use verify_code::{verify_code, CodeCheck, GuessBudget};

use crate::{domain::OrderId, infra::backend::Backend};

/// `lua/master.lua`: the master's replication ID, which the scripts that change a sale check
/// (design.md decision 32).
const MASTER_LIB: &str = include_str!("../../../lua/master.lua");

/// `lua/order_id.lua`: the ID library the admission and ID scripts start with.
const ORDER_ID_LIB: &str = include_str!("../../../lua/order_id.lua");

/// `lua/take.lua`: taking a unit and enqueueing its order (after the ID library).
const TAKE_LIB: &str = include_str!("../../../lua/take.lua");

/// `script` with `keys` and `args`, then `WAIT` in one pipeline on one connection to the
/// keys' master (a pipeline goes to the node of its first keyed command; `WAIT` names no key),
/// so the wait covers the script's writes; a dropped connection fails both. The script is
/// loaded once on `NOSCRIPT`. Fewer replicas than asked for is [`Backend::NotReplicated`].
async fn eval_then_wait<C, A>(
    conn: &mut C,
    script: &redis::Script,
    keys: &[String],
    args: &[A],
    wait: crate::infra::durability::ReplicaWait,
) -> Result<Vec<i64>, Backend>
where
    C: redis::aio::ConnectionLike + Send,
    A: redis::ToRedisArgs,
{
    let mut evalsha = redis::cmd("EVALSHA");
    evalsha.arg(script.get_hash()).arg(keys.len()).arg(keys);
    for a in args {
        evalsha.arg(a);
    }
    let mut pipe = redis::pipe();
    pipe.add_command(evalsha).add_command(wait.command());
    let mut loaded = false;
    loop {
        match pipe.query_async::<(Vec<i64>, i64)>(conn).await {
            Ok((reply, acked)) if wait.holds(acked) => return Ok(reply),
            Ok((_, acked)) => {
                return Err(Backend::NotReplicated {
                    acked,
                    wanted: wait.min_replicas,
                })
            }
            Err(e)
                if !loaded
                    && e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                script.load_async(conn).await?;
                loaded = true;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The UTC day an order-ID counter is named for; the ID scripts compare its number (days since
/// 1970-01-01) with the Redis clock's day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDay(chrono::NaiveDate);

impl CounterDay {
    /// The day of the app's clock: right except in the seconds around midnight when the app's
    /// and Redis's clocks disagree, and then the script answers its own day.
    pub fn today() -> Self {
        Self(chrono::Utc::now().date_naive())
    }

    /// A day number (days since 1970-01-01), as the scripts answer it; `None` past the
    /// calendar's range (a reply no clock gives).
    pub fn from_days(day: i64) -> Option<Self> {
        epoch()
            .checked_add_signed(chrono::TimeDelta::try_days(day)?)
            .map(Self)
    }

    /// The day number (days since 1970-01-01).
    pub fn get(self) -> i64 {
        self.0.signed_duration_since(epoch()).num_days()
    }

    pub fn date(self) -> chrono::NaiveDate {
        self.0
    }

    /// The counter key of `shard` for this day.
    pub fn counter(self, keys: &crate::infra::keys::Keys, shard: crate::domain::Shard) -> String {
        keys.order_counter(shard, self.date())
    }
}

/// 1970-01-01, day 0 of the scripts' day numbers.
fn epoch() -> chrono::NaiveDate {
    chrono::DateTime::UNIX_EPOCH.date_naive()
}

/// An order ID from the `secs, seq` pair a script returns.
fn order_id(secs: i64, seq: i64) -> Option<OrderId> {
    OrderId::from_parts(u32::try_from(secs).ok()?, u32::try_from(seq).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::CounterDay;

    #[test]
    fn a_counter_day_is_its_number_and_no_clock_gives_one_past_the_calendar() {
        let today = CounterDay::today();
        assert_eq!(CounterDay::from_days(today.get()), Some(today));
        let day0 = CounterDay::from_days(0).expect("1970-01-01");
        assert_eq!(day0.date().to_string(), "1970-01-01");
        assert_eq!(
            CounterDay::from_days(20_000).map(CounterDay::get),
            Some(20_000)
        );
        assert_eq!(CounterDay::from_days(i64::MAX), None);
        assert_eq!(CounterDay::from_days(-1_000_000_000), None);
    }
}
