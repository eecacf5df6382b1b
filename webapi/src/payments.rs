//! The payments an admin looks at (`GET /api/admin/payments`, the page `/admin/payments`):
//! one wire shape for both.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One payment as an admin sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentRow {
    /// The provider's name for the hosted payment (Stripe: `cs_…`).
    pub payment_id: String,
    /// Decimal text, as every order ID on the wire.
    pub order_id: String,
    pub voucher_id: i64,
    pub amount_cents: i64,
    pub currency: String,
    /// `open`, `paid`, `flagged`, `refund_owed`, `refund_failed`, `refunded` or `disputed`.
    pub state: String,
    /// The provider's reference of the money (Stripe: `pi_…`), once taken.
    pub provider_ref: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// A page of the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentsView {
    pub rows: Vec<PaymentRow>,
    /// `attention`, `paid` or `refunded`.
    pub filter: String,
    pub page: usize,
    pub pages: usize,
    /// How many the filter selects in all.
    pub total: i64,
}

/// The filters an admin chooses from: `(query value, words)`.
pub const FILTERS: [(&str, &str); 3] = [
    ("attention", "Needs attention"),
    ("paid", "Paid"),
    ("refunded", "Refunded"),
];

/// Words for a listed state.
pub fn state_words(state: &str) -> &'static str {
    match state {
        "open" => "Open",
        "paid" => "Paid",
        "flagged" => "Flagged: amount or currency did not match",
        "refund_owed" => "Refund owed",
        "refund_failed" => "Refund refused by the provider",
        "refunded" => "Refunded",
        "disputed" => "Disputed",
        _ => "Closed",
    }
}
