//! Types that cross the wire: server functions, the REST API and the browser share them, so
//! they compile to wasm and carry no server-only dependency. They are made of the `domain`
//! crate's types, so a status is an enum and an ID is parsed on arrival, on both sides.

use chrono::{DateTime, Utc};
use domain::{
    EntryState, Opening, OrderId, OrderStatus, Phone, SaleWindow, UserId, VoucherId, VoucherStatus,
};
use serde::{Deserialize, Serialize};

/// How many vouchers the listings show (the home page, the console, `GET /api/vouchers`).
pub const LIST_LIMIT: i64 = 200;

/// A voucher as listed (`GET /api/vouchers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherView {
    pub id: VoucherId,
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    /// The stock the sale started with.
    pub stock: i64,
    /// Units left to sell.
    pub remaining: i64,
    /// `begins_at`, `ends_at` on the wire.
    #[serde(flatten)]
    pub window: SaleWindow,
    /// `opening` (`first_come` or `draw`) and, for a draw, `entries_open_at` on the wire.
    #[serde(flatten)]
    pub opening: Opening,
    /// Where the sale stood when the server read it.
    pub status: VoucherStatus,
}

impl VoucherView {
    /// Where the sale stands at `now` with the units the view last heard of.
    pub fn status_at(&self, now: DateTime<Utc>) -> VoucherStatus {
        VoucherStatus::at(&self.window, self.remaining, now)
    }
}

/// An order as its shopper sees it (`GET /api/orders/{id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderView {
    /// A decimal string on the wire: the 64-bit ID does not fit a JavaScript number.
    pub order_id: OrderId,
    pub voucher_id: VoucherId,
    /// `status` (and `reason` when failed) on the wire.
    #[serde(flatten)]
    pub status: OrderStatus,
    pub created_at: DateTime<Utc>,
}

/// A voucher with the server's clock when it was read, so that a page's countdown follows the
/// sale's clock rather than the browser's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDetail {
    pub voucher: VoucherView,
    pub server_time: DateTime<Utc>,
}

/// What a sale page polls: the stock left and the sale's end as Redis has them (`None` when
/// the sale is not in Redis: an admin may end a sale early), and the server's clock, which the
/// page's countdown follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StockNow {
    pub remaining: Option<i64>,
    pub ends_at: Option<DateTime<Utc>>,
    /// A draw sale's entrants so far (0 for first come).
    #[serde(default)]
    pub entrants: i64,
    pub server_time: DateTime<Utc>,
}

/// A shopper's standing in a draw (`GET /api/vouchers/{id}/entries/me`, the sale page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryView {
    pub state: EntryState,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub order_id: Option<OrderId>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rank: Option<i64>,
    pub entrants: i64,
    pub draw_at: DateTime<Utc>,
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
    /// Written and awaiting payment.
    pub awaiting_payment: i64,
    /// Paid, and free orders confirmed.
    pub paid: i64,
    /// Cancelled by the shopper or the deadline; their units went back on sale.
    pub cancelled: i64,
    /// What the paid orders brought in (paid orders only).
    pub revenue_cents: i64,
    /// Payments refunded or owed back (late, or a second payment of a paid order).
    pub refunded: i64,
    /// Payments whose amount or currency did not match their order: not paid, for an admin.
    pub flagged: i64,
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
    /// Seconds the oldest queued order has waited, when writing has stalled.
    pub stalled_secs: Option<u64>,
}

/// The voucher the console charts, with its series (`None` before its first written order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChartView {
    pub voucher_id: VoucherId,
    pub title: String,
    pub series: Option<SalesSeriesView>,
}

/// A countdown: `1d 02:03:04`, `02:03:04` or `03:04` (never negative).
pub fn format_countdown(secs: i64) -> String {
    let s = secs.max(0);
    let (days, h, m, sec) = (
        s / domain::SECS_PER_DAY,
        s / 3_600 % 24,
        s / 60 % 60,
        s % 60,
    );
    match (days, h) {
        (0, 0) => format!("{m:02}:{sec:02}"),
        (0, _) => format!("{h:02}:{m:02}:{sec:02}"),
        _ => format!("{days}d {h:02}:{m:02}:{sec:02}"),
    }
}

/// The signed-in user, for the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    pub user_id: UserId,
    pub phone: Phone,
    pub is_admin: bool,
}

/// Which development conveniences the shop runs with: every page says so in a strip, and the
/// sign-in page shows a code only under dev login.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteMode {
    /// Codes are shown to whoever asks (`SECKILL_DEV_LOGIN`).
    pub dev_login: bool,
    /// Payments are approved without charging (`SECKILL_DEV_PAYMENTS`).
    pub dev_payments: bool,
}

impl SiteMode {
    /// The strip's words, when any convenience is on.
    pub fn warning(self) -> Option<&'static str> {
        match (self.dev_login, self.dev_payments) {
            (true, true) => Some("Development mode: sign-in codes are shown on the page and payments are not charged."),
            (true, false) => Some("Development mode: sign-in codes are shown on the page."),
            (false, true) => Some("Development mode: payments are not charged."),
            (false, false) => None,
        }
    }
}

/// Formats integer cents as money.
pub fn format_price(cents: i64) -> String {
    format!("¥{}.{:02}", cents / 100, (cents % 100).abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::FailureReason;

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

    #[test]
    fn the_wire_shapes_stay_those_of_design_md() {
        let begins = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("time");
        let window = SaleWindow::new(begins, begins + chrono::Duration::hours(1)).expect("window");
        let v = VoucherView {
            id: VoucherId::from_db(4),
            title: "t".into(),
            description: String::new(),
            price_cents: 1,
            stock: 5,
            remaining: 3,
            window,
            opening: Opening::Draw {
                entries_open_at: begins - chrono::Duration::minutes(10),
            },
            status: VoucherStatus::Upcoming,
        };
        let json = serde_json::to_value(&v).expect("serializes");
        assert_eq!(json["id"], 4);
        assert_eq!(json["opening"], "draw");
        assert_eq!(json["entries_open_at"], "2030-01-01T09:50:00Z");
        assert_eq!(json["begins_at"], "2030-01-01T10:00:00Z");
        assert_eq!(json["status"], "upcoming");
        assert_eq!(
            serde_json::from_value::<VoucherView>(json).ok(),
            Some(v.clone())
        );
        assert_eq!(v.status_at(begins), VoucherStatus::OnSale);

        let o = OrderView {
            order_id: OrderId::from_parts(1, 2).expect("fits"),
            voucher_id: VoucherId::from_db(4),
            status: OrderStatus::Failed {
                reason: FailureReason::SoldOut,
            },
            created_at: begins,
        };
        let json = serde_json::to_value(o).expect("serializes");
        assert_eq!(json["order_id"], "4294967298");
        assert_eq!(json["status"], "failed");
        assert_eq!(json["reason"], "sold_out");
        assert_eq!(serde_json::from_value::<OrderView>(json).ok(), Some(o));
    }
}
