//! The two numbers a sale is made of: how many units ([`Stock`]) and when ([`SaleWindow`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The largest stock one voucher may have.
pub const MAX_STOCK: i64 = 10_000_000;

/// A positive stock no larger than [`MAX_STOCK`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Stock(i64);

impl Stock {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for Stock {
    type Error = String;
    fn try_from(value: i64) -> Result<Self, Self::Error> {
        if (1..=MAX_STOCK).contains(&value) {
            Ok(Self(value))
        } else {
            Err(format!(
                "must be between 1 and {}",
                crate::grouped(MAX_STOCK)
            ))
        }
    }
}

impl From<Stock> for i64 {
    fn from(s: Stock) -> Self {
        s.0
    }
}

/// When a sale is open: `[begins_at, ends_at)`, judged by the Redis server's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawWindow")]
pub struct SaleWindow {
    begins_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
}

/// A window as it arrives, before [`SaleWindow::new`] checks it.
#[derive(Deserialize)]
struct RawWindow {
    begins_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
}

impl TryFrom<RawWindow> for SaleWindow {
    type Error = String;
    fn try_from(raw: RawWindow) -> Result<Self, Self::Error> {
        Self::new(raw.begins_at, raw.ends_at)
    }
}

impl SaleWindow {
    /// A window that ends after it begins, each instant to the millisecond (Redis keeps the
    /// window in milliseconds, and the admins' pages find sales by a cursor in milliseconds: a
    /// start finer than that made the next page skip the sales at it).
    pub fn new(begins_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Result<Self, String> {
        use chrono::SubsecRound;
        let (begins_at, ends_at) = (begins_at.trunc_subsecs(3), ends_at.trunc_subsecs(3));
        if ends_at <= begins_at {
            return Err("must be after the start".to_owned());
        }
        Ok(Self { begins_at, ends_at })
    }

    /// This window cut short at `end` when `end` is earlier (an admin ended the sale); a window
    /// that had not begun then begins just before it.
    pub fn ended_by(self, end: DateTime<Utc>) -> Self {
        let end = chrono::SubsecRound::trunc_subsecs(end, 3);
        if end >= self.ends_at {
            return self;
        }
        let begins_at = self.begins_at.min(end - chrono::Duration::milliseconds(1));
        Self {
            begins_at,
            ends_at: end,
        }
    }

    pub fn begins_at(&self) -> DateTime<Utc> {
        self.begins_at
    }
    pub fn ends_at(&self) -> DateTime<Utc> {
        self.ends_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stock_json_goes_through_the_parser() {
        assert_eq!(
            serde_json::from_str::<Stock>("5").map(Stock::get).ok(),
            Some(5)
        );
        assert!(serde_json::from_str::<Stock>("0").is_err());
        assert!(serde_json::from_str::<Stock>("10000001").is_err());
    }

    #[test]
    fn a_window_is_kept_to_the_millisecond() {
        let t = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .expect("time")
                .with_timezone(&Utc)
        };
        let w = SaleWindow::new(
            t("2030-01-01T10:00:00.000500Z"),
            t("2030-01-01T11:00:00.999999Z"),
        )
        .expect("w");
        assert_eq!(w.begins_at(), t("2030-01-01T10:00:00Z"));
        assert_eq!(w.ends_at(), t("2030-01-01T11:00:00.999Z"));
        let cut = w.ended_by(t("2030-01-01T10:30:00.123456Z"));
        assert_eq!(cut.ends_at(), t("2030-01-01T10:30:00.123Z"));
        assert!(
            SaleWindow::new(
                t("2030-01-01T10:00:00.0001Z"),
                t("2030-01-01T10:00:00.0009Z")
            )
            .is_err(),
            "within one millisecond: no window"
        );
    }

    #[test]
    fn a_window_ended_early_ends_then_and_never_grows() {
        let t = |s: &str| {
            DateTime::parse_from_rfc3339(s)
                .expect("time")
                .with_timezone(&Utc)
        };
        let w = SaleWindow::new(t("2030-01-01T10:00:00Z"), t("2030-01-01T11:00:00Z")).expect("w");
        let cut = w.ended_by(t("2030-01-01T10:30:00Z"));
        assert_eq!(cut.ends_at(), t("2030-01-01T10:30:00Z"));
        assert_eq!(cut.begins_at(), w.begins_at());
        assert_eq!(
            w.ended_by(t("2030-01-01T12:00:00Z")),
            w,
            "a later end changes nothing"
        );
        let early = w.ended_by(t("2030-01-01T09:00:00Z"));
        assert!(early.begins_at() < early.ends_at(), "still a window");
    }

    #[test]
    fn a_window_that_ends_before_it_begins_does_not_deserialize() {
        let ok = r#"{"begins_at":"2026-01-01T00:00:00Z","ends_at":"2026-01-01T01:00:00Z"}"#;
        let bad = r#"{"begins_at":"2026-01-01T01:00:00Z","ends_at":"2026-01-01T00:00:00Z"}"#;
        assert!(serde_json::from_str::<SaleWindow>(ok).is_ok());
        assert!(serde_json::from_str::<SaleWindow>(bad).is_err());
    }
}
