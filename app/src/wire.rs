//! Types that cross the wire: server functions, the REST API and the browser share them, so
//! they compile to wasm and carry no server-only dependency.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A voucher as listed (`GET /api/vouchers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherView {
    pub id: i64,
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    /// The stock the sale started with.
    pub stock: i64,
    /// Units left to sell.
    pub remaining: i64,
    pub begins_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// `upcoming`, `on_sale`, `sold_out` or `ended`.
    pub status: String,
}

/// An order as its shopper sees it (`GET /api/orders/{id}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderView {
    /// Decimal string: the 64-bit ID does not fit a JavaScript number.
    pub order_id: String,
    pub voucher_id: i64,
    /// `queued`, `created` or `failed`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A voucher with the server's clock when it was read, so that a page's countdown follows the
/// sale's clock rather than the browser's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDetail {
    pub voucher: VoucherView,
    pub server_time: DateTime<Utc>,
}

/// What a sale page polls: the stock left (`None` when the sale is not in Redis) and the
/// server's clock, which the page's countdown follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StockNow {
    pub remaining: Option<i64>,
    pub server_time: DateTime<Utc>,
}

/// An order with the title of its voucher (my orders, the order page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderDetail {
    pub order: OrderView,
    pub voucher_title: String,
}

/// One voucher in the admin console: where each unit is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleRow {
    pub voucher: VoucherView,
    /// Stock left in Redis; `None` when the sale is not preloaded (or retired).
    pub redis_stock: Option<i64>,
    /// Admitted, not yet written.
    pub queued: i64,
    pub written: i64,
    /// Refused by the worker.
    pub failed: i64,
    /// Given up on by the worker.
    pub dead_lettered: i64,
}

/// Orders written per interval of admission time, for the console's chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SalesSeriesView {
    pub start: DateTime<Utc>,
    pub bucket_secs: i64,
    pub counts: Vec<i64>,
}

/// The admin console: every voucher's counts and one voucher's chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleView {
    pub rows: Vec<ConsoleRow>,
    pub chart: Option<ChartView>,
}

/// The voucher the console charts, with its series (`None` before its first written order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChartView {
    pub voucher_id: i64,
    pub title: String,
    pub series: Option<SalesSeriesView>,
}

/// Where a sale is at a given instant, as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SalePhase {
    Upcoming,
    OnSale,
    SoldOut,
    Ended,
}

impl SalePhase {
    /// The sale's phase at `now` (the same rule as the core's `VoucherStatus::at`, which the
    /// wasm build cannot link): ended, else sold out, else by the window's start.
    pub fn of(v: &VoucherView, now: DateTime<Utc>) -> Self {
        if now >= v.ends_at {
            Self::Ended
        } else if v.remaining <= 0 {
            Self::SoldOut
        } else if now < v.begins_at {
            Self::Upcoming
        } else {
            Self::OnSale
        }
    }

    /// The wire name (`VoucherView::status`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Upcoming => "upcoming",
            Self::OnSale => "on_sale",
            Self::SoldOut => "sold_out",
            Self::Ended => "ended",
        }
    }
}

/// A countdown: `1d 02:03:04`, `02:03:04` or `03:04` (never negative).
pub fn format_countdown(secs: i64) -> String {
    let s = secs.max(0);
    let (days, h, m, sec) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match (days, h) {
        (0, 0) => format!("{m:02}:{sec:02}"),
        (0, _) => format!("{h:02}:{m:02}:{sec:02}"),
        _ => format!("{days}d {h:02}:{m:02}:{sec:02}"),
    }
}

/// The signed-in user, for the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    pub user_id: i64,
    pub phone: String,
    pub is_admin: bool,
}

/// One field's validation message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldMessage {
    pub field: String,
    pub message: String,
}

/// Formats integer cents as money.
pub fn format_price(cents: i64) -> String {
    format!("¥{}.{:02}", cents / 100, (cents % 100).abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voucher(remaining: i64) -> VoucherView {
        let begins = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("time");
        VoucherView {
            id: 1,
            title: "t".into(),
            description: String::new(),
            price_cents: 1,
            stock: 5,
            remaining,
            begins_at: begins,
            ends_at: begins + chrono::Duration::hours(1),
            status: String::new(),
        }
    }

    #[test]
    fn the_phase_is_ended_then_sold_out_then_by_the_start() {
        let v = voucher(3);
        let at = |secs: i64| v.begins_at + chrono::Duration::seconds(secs);
        assert_eq!(SalePhase::of(&v, at(-1)), SalePhase::Upcoming);
        assert_eq!(SalePhase::of(&v, at(0)), SalePhase::OnSale);
        assert_eq!(SalePhase::of(&v, at(3_599)), SalePhase::OnSale);
        assert_eq!(SalePhase::of(&v, at(3_600)), SalePhase::Ended);
        assert_eq!(SalePhase::of(&voucher(0), at(10)), SalePhase::SoldOut);
        assert_eq!(SalePhase::of(&voucher(0), at(-10)), SalePhase::SoldOut);
        assert_eq!(SalePhase::of(&voucher(0), at(4_000)), SalePhase::Ended);
    }

    #[test]
    fn countdowns_drop_empty_leading_units() {
        assert_eq!(format_countdown(5), "00:05");
        assert_eq!(format_countdown(-3), "00:00");
        assert_eq!(format_countdown(3_725), "01:02:05");
        assert_eq!(format_countdown(90_061), "1d 01:01:01");
    }

    #[test]
    fn prices_show_two_decimals() {
        assert_eq!(format_price(990), "¥9.90");
        assert_eq!(format_price(5), "¥0.05");
        assert_eq!(format_price(120_000), "¥1200.00");
    }
}
