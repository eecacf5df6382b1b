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

    #[test]
    fn prices_show_two_decimals() {
        assert_eq!(format_price(990), "¥9.90");
        assert_eq!(format_price(5), "¥0.05");
        assert_eq!(format_price(120_000), "¥1200.00");
    }
}
