//! The `orders` and `order_failures` tables: the worker's write ([`write`], decided by
//! [`decide`]), an order's life after it (payment, cancellation, the deadline: [`lifecycle`]),
//! and what a shopper reads of their orders.

mod decide;
pub mod lifecycle;
mod write;

#[cfg(feature = "testing")]
pub use decide::{decide, Existing};
pub use decide::{Decision, QueuedOrder};
pub use write::{dead_letter, write_batch, DeadLettered};

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::{
    CancellerError, FailureReason, OrderId, OrderStatus, Refund, Shard, UserId, VoucherId,
};

/// An order's state as PostgreSQL knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOrder {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub status: OrderStatus,
}

/// The columns every read of an order's state selects, from `orders` or from
/// `order_failures`: id, voucher, status text, pay-by, canceller, failure reason, and the states
/// of the payments a shopper hears of: a cancelled order's that went back or must
/// ([`Refund::of_payment_states`]), an unpaid one's that did not match it (`flagged`) and
/// whether another is open (being paid: not a mismatch to tell of then).
const FROM_ORDERS: &str =
    "SELECT id, voucher_id, status, pay_by, cancelled_by, NULL::text AS reason,
        CASE WHEN status IN ('cancelled', 'created') THEN (
            SELECT array_agg(p.state) FROM payments p
            WHERE p.order_id = orders.id
              AND p.state IN ('refund_due', 'refunded', 'refund_failed', 'flagged', 'open')
        ) END AS payments
    FROM orders";
const FROM_FAILURES: &str = "SELECT id, voucher_id, 'failed'::text, NULL::timestamptz, NULL::text, reason, NULL::text[] FROM order_failures";

type Row = (
    i64,
    i64,
    String,
    Option<DateTime<Utc>>,
    Option<String>,
    Option<String>,
    Option<Vec<String>>,
);

fn stored(
    (id, voucher, status, pay_by, by, failure, payments): Row,
) -> Result<StoredOrder, sqlx::Error> {
    let decode = |e: String| sqlx::Error::Decode(e.into());
    let payments = payments.iter().flatten().map(String::as_str);
    let status = match (status.as_str(), pay_by, by, failure) {
        ("created", Some(pay_by), _, _) => OrderStatus::Created {
            pay_by,
            payment_mismatch: payments.clone().any(|state| state == "flagged")
                && !payments.clone().any(|state| state == "open"),
        },
        ("paid", ..) => OrderStatus::Paid,
        ("confirmed", ..) => OrderStatus::Confirmed,
        ("cancelled", _, Some(by), _) => OrderStatus::Cancelled {
            cancelled_by: by
                .parse()
                .map_err(|e: CancellerError| decode(e.to_string()))?,
            refund: Refund::of_payment_states(payments),
        },
        ("failed", _, _, Some(text)) => OrderStatus::Failed {
            reason: reason(&text)?,
        },
        (other, ..) => return Err(decode(format!("order {id}: unreadable status {other:?}"))),
    };
    Ok(StoredOrder {
        order: OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        voucher: VoucherId::from_db(voucher),
        status,
    })
}

/// `order` if it belongs to `user` and PostgreSQL has it (written or failed).
pub async fn find_for_user(
    db: &PgPool,
    order: OrderId,
    user: UserId,
) -> Result<Option<StoredOrder>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{FROM_ORDERS} WHERE id = $1 AND user_id = $2
         UNION ALL
         {FROM_FAILURES} WHERE id = $1 AND user_id = $2
         LIMIT 1"
    )))
    .bind(order.as_i64())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    row.map(stored).transpose()
}

/// The live (not cancelled) written order `user` holds on `voucher`, if any.
pub async fn written_for(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<OrderId>, sqlx::Error> {
    let id: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM orders WHERE voucher_id = $1 AND user_id = $2 AND status <> 'cancelled'",
    )
    .bind(voucher.get())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    id.map(|id| OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e))))
        .transpose()
}

/// `user`'s orders known to PostgreSQL, newest first.
pub async fn list_for_user(
    db: &PgPool,
    user: UserId,
    limit: i64,
) -> Result<Vec<StoredOrder>, sqlx::Error> {
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT * FROM (
             {FROM_ORDERS} WHERE user_id = $1
             UNION ALL
             {FROM_FAILURES} WHERE user_id = $1
         ) o ORDER BY id DESC LIMIT $2"
    )))
    .bind(user.get())
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(stored).collect()
}

/// The highest per-shard count among the order IDs of `shard` PostgreSQL holds (written or
/// failed) in `[from, until)`: a UTC day's IDs, when the bounds are that day's first second.
pub async fn highest_count(
    db: &PgPool,
    shard: Shard,
    from: OrderId,
    until: OrderId,
) -> Result<Option<u32>, sqlx::Error> {
    // The low 24 bits of an ID are its shard's count, the next 8 the shard (design.md §3).
    let max: Option<i64> = sqlx::query_scalar(
        "SELECT max(id & 16777215) FROM (
             SELECT id FROM orders WHERE id >= $1 AND id < $2
             UNION ALL
             SELECT id FROM order_failures WHERE id >= $1 AND id < $2
         ) ids
         WHERE (id >> 24) & 255 = $3",
    )
    .bind(from.as_i64())
    .bind(until.as_i64())
    .bind(i64::from(shard.index()))
    .fetch_one(db)
    .await?;
    Ok(max.and_then(|m| u32::try_from(m).ok()))
}

/// A stored failure reason, parsed; text this code does not know is a decode error.
pub(crate) fn reason(text: &str) -> Result<FailureReason, sqlx::Error> {
    text.parse().map_err(|e| sqlx::Error::Decode(Box::new(e)))
}
