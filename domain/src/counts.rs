//! [`OrderCounts`]: where a voucher's written orders and their money are, as the console shows
//! them. Declared once: PostgreSQL's tally, the core's console and the wire all carry this.

use serde::{Deserialize, Serialize};

/// A voucher's written orders and payments, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderCounts {
    /// Orders written (whatever became of them since).
    pub written: i64,
    /// Written orders awaiting payment.
    pub awaiting_payment: i64,
    /// Paid, and free orders confirmed.
    pub paid: i64,
    /// Cancelled (by the shopper, the deadline or the shop), their units returned.
    pub cancelled: i64,
    /// What the paid orders brought in (refunds are not revenue: a refunded payment never
    /// paid an order).
    pub revenue_cents: i64,
    /// Payments given back, or owed back (they arrived for orders already cancelled or paid).
    pub refunded: i64,
    /// Payments an admin must look at: money that did not match its order (amount or
    /// currency; not counted as paid), refunds the provider refused for good or that failed,
    /// and disputes open or lost.
    pub flagged: i64,
    /// Orders the worker refused (sold out in PostgreSQL, already bought, unknown voucher);
    /// the ones it gave up delivering are not counted here (see the dead-letter stream).
    pub failed: i64,
}

/// A sale's reminders (issue #56), counted: asked (whatever became of them), sent, failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReminderCounts {
    pub asked: i64,
    pub sent: i64,
    pub failed: i64,
}
