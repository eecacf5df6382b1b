//! The REST API's answers that are not a view of a voucher, an order or a draw (those are in
//! [`crate::wire`]): one declaration each, serialized by the server's handlers and read by the
//! islands, so a field renamed here is renamed for both (issue #45).

use domain::OrderId;
use serde::{Deserialize, Serialize};

use crate::wire::ReceiptView;

/// `GET /api/live`: the process serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Live {
    pub live: bool,
}

/// `GET /api/health`: the stores and the order writer, for operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Health {
    pub postgres: bool,
    pub redis: bool,
    pub worker: WorkerHealth,
    pub draws: DrawsHealth,
    pub reminders: RemindersHealth,
}

/// The order writer: how long the oldest queued order has waited, and whether that is a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct WorkerHealth {
    pub oldest_queued_ms: Option<u64>,
    pub stalled: bool,
}

/// Draws begun over a minute ago and not recorded (`None`: not known just now).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct DrawsHealth {
    pub overdue: Option<i64>,
}

/// Reminders still waiting a minute past their moment (`None`: not known just now).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RemindersHealth {
    pub overdue: Option<i64>,
}

/// `POST /api/login/code`: the code itself under dev login, else nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CodeIssued {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `POST /api/login`: signed in (the session is the cookie).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SignedIn {
    pub user_id: i64,
}

/// `POST /api/admin/vouchers`: `201`, the new voucher's ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Created {
    pub id: i64,
}

/// `POST /api/vouchers/{id}/reminder`: when the shopper's text goes, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReminderAnswer {
    /// When the text goes (an ask made after that moment: at once).
    pub goes_at: chrono::DateTime<chrono::Utc>,
    /// `waiting` (it may still be taken back), `sending` (being posted now), `sent` (the relay
    /// took it) or `failed` (it could not be sent: asking again does not send it).
    pub state: String,
}

/// `POST /api/vouchers/{id}/orders`: `202`, the order taken, or the one the shopper already
/// held on this sale (`already_bought`), so a buy whose answer was lost may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Bought {
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub order_id: OrderId,
    #[serde(default)]
    pub already_bought: bool,
}

/// `POST /api/vouchers/{id}/entries`: `202`, the shopper's signed receipt and the entrants so
/// far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Entered {
    pub receipt: ReceiptView,
    pub entrants: i64,
}

/// `GET /api/draws/key`: the public key the receipts of sales created now are signed with (hex),
/// and its id. A sale keeps the key named in its transcript (`receipt_key`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReceiptKey {
    pub ed25519: String,
    pub id: String,
}

/// `POST /api/orders/{id}/pay`: where to send the shopper to pay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PayStart {
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub order_id: OrderId,
    pub redirect_url: String,
}

/// `POST /api/orders/{id}/cancel`: the order is cancelled (`status` is `cancelled`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Cancelled {
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub order_id: OrderId,
    pub status: String,
}

/// `POST /api/payments/{provider}/webhook`: the notification is applied (or was already).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Received {
    pub received: bool,
}

/// `POST /api/admin/orders/{id}/refund`: `202`, the payment's state after the refund was asked
/// for (`refunded`, or `refund_owed` while the provider has not answered).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RefundAsked {
    #[cfg_attr(feature = "ssr", schema(value_type = String))]
    pub order_id: OrderId,
    pub state: String,
}
