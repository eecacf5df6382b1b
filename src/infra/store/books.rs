//! The books of a period, a batch at a time in a fixed order (keyset: each batch starts after
//! the last row of the one before; `orders_admitted` and `payments_created` serve them), so an
//! export of a year holds one batch in memory.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

/// An order as the books list it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OrderLine {
    pub id: i64,
    pub admitted_at: DateTime<Utc>,
    pub written_at: DateTime<Utc>,
    pub voucher_id: i64,
    pub title: String,
    pub user_id: i64,
    pub status: String,
    pub price_cents: i64,
    pub paid_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub cancelled_by: Option<String>,
    /// Its latest payment's state and dispute, if it has a payment.
    pub payment_state: Option<String>,
    pub dispute: Option<String>,
}

/// Where the next batch of orders starts: after this admission time and order ID.
pub type OrderKey = (DateTime<Utc>, i64);

/// Up to `limit` orders admitted in `[from, to)` after `after`, in admission order.
pub async fn orders(
    db: &PgPool,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    after: Option<OrderKey>,
    limit: i64,
) -> Result<Vec<OrderLine>, sqlx::Error> {
    let (at, id) = after.unwrap_or((from, 0));
    sqlx::query_as(
        "SELECT o.id, o.admitted_at, o.written_at, o.voucher_id, v.title, o.user_id, o.status,
                v.price_cents, o.paid_at, o.cancelled_at, o.cancelled_by,
                p.state AS payment_state, p.dispute
           FROM orders o
           JOIN vouchers v ON v.id = o.voucher_id
           LEFT JOIN LATERAL (
               SELECT state, dispute FROM payments
                WHERE order_id = o.id ORDER BY attempt DESC LIMIT 1
           ) p ON true
          WHERE o.admitted_at >= $1 AND o.admitted_at < $2 AND (o.admitted_at, o.id) > ($3, $4)
          ORDER BY o.admitted_at, o.id
          LIMIT $5",
    )
    .bind(from)
    .bind(to)
    .bind(at)
    .bind(id)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// A payment as the books list it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct PaymentLine {
    pub session_id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub order_id: i64,
    pub voucher_id: i64,
    pub attempt: i32,
    pub provider: String,
    pub state: String,
    pub amount_cents: i64,
    pub currency: String,
    pub payment_ref: Option<String>,
    pub dispute: Option<String>,
    pub refund_error: Option<String>,
    pub mismatch: Option<String>,
}

/// Where the next batch of payments starts: after this opening time and session.
pub type PaymentKey = (DateTime<Utc>, String);

/// Up to `limit` payments opened in `[from, to)` after `after`, in opening order.
pub async fn payments(
    db: &PgPool,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    after: Option<PaymentKey>,
    limit: i64,
) -> Result<Vec<PaymentLine>, sqlx::Error> {
    let (at, session) = after.unwrap_or((from, String::new()));
    sqlx::query_as(
        "SELECT p.session_id, p.created_at, p.updated_at, p.order_id, o.voucher_id, p.attempt,
                p.provider, p.state, p.amount_cents, p.currency, p.payment_ref, p.dispute,
                p.refund_error, p.mismatch
           FROM payments p
           JOIN orders o ON o.id = p.order_id
          WHERE p.created_at >= $1 AND p.created_at < $2
            AND (p.created_at, p.session_id) > ($3, $4)
          ORDER BY p.created_at, p.session_id
          LIMIT $5",
    )
    .bind(from)
    .bind(to)
    .bind(at)
    .bind(session)
    .bind(limit)
    .fetch_all(db)
    .await
}
