//! Types that cross the wire: server functions, the REST API and the browser share them, so
//! they compile to wasm and carry no server-only dependency. They are made of the `domain`
//! crate's types, so a status is an enum and an ID is parsed on arrival, on both sides.

use chrono::{DateTime, Utc};
use domain::{
    Canceller, FailureReason, Opening, OpeningKind, OrderId, OrderStatus, Phone, Refund,
    SaleWindow, UserId, VoucherId, VoucherStatus,
};
use serde::{Deserialize, Serialize};

mod draws;
#[cfg(feature = "ssr")]
pub use draws::MoveView;
pub use draws::{EntryView, ProofView, ReceiptView};

/// How many vouchers the listings show (the home page, the console, `GET /api/vouchers`).
pub const LIST_LIMIT: i64 = 200;

/// A voucher as listed (`GET /api/vouchers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FlatVoucher")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "FlatOrder")]
pub struct OrderView {
    /// A decimal string on the wire: the 64-bit ID does not fit a JavaScript number.
    pub order_id: OrderId,
    pub voucher_id: VoucherId,
    /// `status` and the fields of that status on the wire.
    pub status: OrderStatus,
    pub created_at: DateTime<Utc>,
}

/// Flat, as [`FlatOrder`] reads it: the status's fields beside the order's, and for a
/// cancelled order with money involved its `refund` (`owed`, `refunded`, `refused`) with
/// `refunded: true` only once the provider confirmed the money went back.
impl Serialize for OrderView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("order_id", &self.order_id)?;
        m.serialize_entry("voucher_id", &self.voucher_id)?;
        m.serialize_entry("status", self.status.as_str())?;
        match self.status {
            OrderStatus::Created {
                pay_by,
                payment_mismatch,
            } => {
                m.serialize_entry("pay_by", &pay_by)?;
                if payment_mismatch {
                    m.serialize_entry("payment_mismatch", &true)?;
                }
            }
            OrderStatus::Cancelled {
                cancelled_by,
                refund,
            } => {
                m.serialize_entry("cancelled_by", &cancelled_by)?;
                if !refund.is_none() {
                    m.serialize_entry("refund", &refund)?;
                }
                if refund == Refund::Refunded {
                    m.serialize_entry("refunded", &true)?;
                }
            }
            OrderStatus::Failed { reason } => m.serialize_entry("reason", &reason)?,
            OrderStatus::Queued | OrderStatus::Paid | OrderStatus::Confirmed => {}
        }
        m.serialize_entry("created_at", &self.created_at)?;
        m.end()
    }
}

// Read back through flat twins of the two views: the JSON is flat (`begins_at`, `opening`,
// `status`, `pay_by` beside the other fields), and a derived `flatten` or internally tagged
// enum reads through serde's buffered `Content`, whose machinery weighed on every island's
// bundle. A flat struct reads in one pass; the checks are the same ones (`SaleWindow::new`,
// each status with its fields).

/// [`VoucherView`] as it is on the wire (also its schema in the OpenAPI document).
#[derive(Deserialize)]
#[cfg_attr(
    feature = "ssr",
    derive(utoipa::ToSchema),
    schema(
        as = VoucherView,
        description = "A voucher, and where its sale stood when the server read it."
    )
)]
pub(crate) struct FlatVoucher {
    #[cfg_attr(feature = "ssr", schema(value_type = i64))]
    id: VoucherId,
    title: String,
    description: String,
    price_cents: i64,
    stock: i64,
    remaining: i64,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    begins_at: DateTime<Utc>,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    ends_at: DateTime<Utc>,
    /// `first_come` or `draw`.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    opening: Option<OpeningKind>,
    #[serde(default, deserialize_with = "domain::rfc3339::deserialize_option")]
    entries_open_at: Option<DateTime<Utc>>,
    /// `upcoming`, `on_sale`, `sold_out` or `ended`.
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    status: VoucherStatus,
}

impl TryFrom<FlatVoucher> for VoucherView {
    type Error = String;

    fn try_from(v: FlatVoucher) -> Result<Self, String> {
        let opening = match (
            v.opening.unwrap_or(OpeningKind::FirstCome),
            v.entries_open_at,
        ) {
            (OpeningKind::FirstCome, _) => Opening::FirstCome,
            (OpeningKind::Draw, Some(entries_open_at)) => Opening::Draw { entries_open_at },
            (OpeningKind::Draw, None) => return Err("a draw needs entries_open_at".to_owned()),
        };
        Ok(Self {
            id: v.id,
            title: v.title,
            description: v.description,
            price_cents: v.price_cents,
            stock: v.stock,
            remaining: v.remaining,
            window: SaleWindow::new(v.begins_at, v.ends_at).map_err(|e| format!("ends_at {e}"))?,
            opening,
            status: v.status,
        })
    }
}

/// An order's status as named on the wire.
#[derive(Deserialize)]
#[cfg_attr(
    feature = "ssr",
    derive(utoipa::ToSchema),
    schema(as = OrderStatusName, description = "Where an order stands.")
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StatusName {
    Queued,
    Created,
    Paid,
    Confirmed,
    Cancelled,
    Failed,
}

/// [`OrderView`] as it is on the wire (also its schema in the OpenAPI document).
#[derive(Deserialize)]
#[cfg_attr(
    feature = "ssr",
    derive(utoipa::ToSchema),
    schema(
        as = OrderView,
        description = "An order as its shopper sees it: `pay_by` while it awaits payment (and \
            `payment_mismatch` once money that does not match it arrived), `cancelled_by` and \
            `refunded` once cancelled, `reason` once failed."
    )
)]
pub(crate) struct FlatOrder {
    /// A decimal string: the 64-bit ID does not fit a JavaScript number.
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    order_id: OrderId,
    #[cfg_attr(feature = "ssr", schema(value_type = i64))]
    voucher_id: VoucherId,
    status: StatusName,
    #[serde(default, deserialize_with = "domain::rfc3339::deserialize_option")]
    pay_by: Option<DateTime<Utc>>,
    /// `true` while it awaits payment once money that does not match it (another amount or
    /// currency) arrived: that money did not pay it; the shop holds it for its admins and gives
    /// it back once the order is paid another way or cancelled.
    #[serde(default)]
    payment_mismatch: bool,
    /// `shopper`, `deadline` or `shop`, once cancelled.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    cancelled_by: Option<Canceller>,
    /// Once cancelled with money taken: `owed` (on its way back), `refunded` (the provider
    /// confirmed it) or `refused` (the provider refused it for good; the shop makes it right).
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    refund: Option<Refund>,
    /// `true` only once the provider confirmed the refund (`refund` is `refunded`).
    #[serde(default)]
    refunded: bool,
    /// Why the order failed, once failed.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>))]
    reason: Option<FailureReason>,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    created_at: DateTime<Utc>,
}

impl TryFrom<FlatOrder> for OrderView {
    type Error = String;

    fn try_from(o: FlatOrder) -> Result<Self, String> {
        let missing = |field: &str| format!("this status needs {field}");
        let status = match o.status {
            StatusName::Queued => OrderStatus::Queued,
            StatusName::Created => OrderStatus::Created {
                pay_by: o.pay_by.ok_or_else(|| missing("pay_by"))?,
                payment_mismatch: o.payment_mismatch,
            },
            StatusName::Paid => OrderStatus::Paid,
            StatusName::Confirmed => OrderStatus::Confirmed,
            StatusName::Cancelled => OrderStatus::Cancelled {
                cancelled_by: o.cancelled_by.ok_or_else(|| missing("cancelled_by"))?,
                refund: match (o.refund, o.refunded) {
                    (Some(refund), _) => refund,
                    (None, true) => Refund::Refunded,
                    (None, false) => Refund::None,
                },
            },
            StatusName::Failed => OrderStatus::Failed {
                reason: o.reason.ok_or_else(|| missing("reason"))?,
            },
        };
        Ok(Self {
            order_id: o.order_id,
            voucher_id: o.voucher_id,
            status,
            created_at: o.created_at,
        })
    }
}

/// A voucher with the server's clock when it was read, so that a page's countdown follows the
/// sale's clock rather than the browser's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoucherDetail {
    pub voucher: VoucherView,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub server_time: DateTime<Utc>,
}

/// What a sale page polls: the stock left and the sale's end as Redis has them (`None` when
/// the sale is not in Redis: an admin may end a sale early), and the server's clock, which the
/// page's countdown follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StockNow {
    pub remaining: Option<i64>,
    #[serde(deserialize_with = "domain::rfc3339::deserialize_option")]
    pub ends_at: Option<DateTime<Utc>>,
    /// A draw sale's entrants so far (0 for first come).
    #[serde(default)]
    pub entrants: i64,
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
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
    /// Written orders and payments (PostgreSQL).
    pub counts: domain::OrderCounts,
    /// Given up on by the worker.
    pub dead_lettered: i64,
    /// A draw whose entrant list is committed, waiting for this beacon round (issue #51).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub awaiting_round: Option<u64>,
    /// Reminders asked, sent and failed (issue #56).
    pub reminders: domain::ReminderCounts,
}

/// Orders written per interval of admission time, for the console's chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SalesSeriesView {
    #[serde(deserialize_with = "domain::rfc3339::deserialize")]
    pub start: DateTime<Utc>,
    pub bucket_secs: i64,
    pub counts: Vec<i64>,
}

/// The admin console: every voucher's counts and one voucher's chart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleView {
    pub rows: Vec<ConsoleRow>,
    /// The place the rows start after (`None`: the newest), which a refresh asks for again.
    pub at: Option<domain::SaleCursor>,
    /// Where the older page starts (`None`: these are the oldest).
    pub next: Option<domain::SaleCursor>,
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
    /// No SMS relay is set (`SECKILL_SMS_WEBHOOK_URL`, allowed only under dev login): nothing is
    /// texted, the reminders shoppers ask for included.
    #[serde(default)]
    pub no_texts: bool,
}

#[cfg(test)]
mod tests;
