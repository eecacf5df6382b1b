//! The Lua scripts (`lua/`), one wrapper per file, and the decoding of their replies.
//!
//! Each wrapper declares every key its script touches (so it runs on one Redis Cluster slot),
//! and decodes the script's reply into a Rust enum; a reply not listed is an
//! [`Backend::UnknownReply`](crate::infra::backend::Backend::UnknownReply), never a silent default. `redis::Script` runs `EVALSHA` and
//! falls back to loading the script on `NOSCRIPT`.

mod admit;
mod apply_move;
mod end_sale;
mod lock;
#[cfg(feature = "testing")]
mod order_id;
mod preload;
mod raise_counter;
mod retire;
mod settle;
mod verify_code;

#[cfg(feature = "testing")]
pub use admit::{admit, admit_batch_on_day, admit_on_day, ADMIT_SOURCE};
pub use admit::{admit_batch, AdmissionOutcome};
pub use apply_move::{apply_move, MoveApplied};
pub use end_sale::{end_sale, SaleEnd};
pub use lock::{lock_acquire, lock_release, lock_renew, LockGrant, LockRelease};
#[cfg(feature = "testing")]
pub use order_id::{next_order_id, NextIdError};

pub use preload::{preload, PreloadInput, PreloadMode, PreloadOutcome};
pub use raise_counter::raise_counter;
pub use retire::{retire, Retirement};
pub use settle::{settle, SettleEntry, Settled};
pub use verify_code::{verify_code, CodeCheck, GuessBudget};

use crate::{domain::OrderId, infra::backend::Backend};

/// `lua/master.lua`: the master's replication ID, which the scripts that change a sale check
/// (design.md decision 32).
const MASTER_LIB: &str = include_str!("../../../lua/master.lua");

/// `lua/order_id.lua`: the ID library the admission and ID scripts start with.
const ORDER_ID_LIB: &str = include_str!("../../../lua/order_id.lua");

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
