//! The payments an admin looks at (`GET /api/admin/payments`, the page `/admin/payments`):
//! one wire shape for both.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One payment as an admin sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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
