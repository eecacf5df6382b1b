//! The admin console's queries over written orders: counts per voucher and sales over time.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::{FailureReason, OrderCounts, VoucherId};

/// The counts of each voucher's orders, in the order given.
pub async fn tallies(db: &PgPool, vouchers: &[VoucherId]) -> Result<Vec<OrderCounts>, sqlx::Error> {
    let ids: Vec<i64> = vouchers.iter().map(|v| v.get()).collect();
    // The SELECT's columns, in its order.
    type Row = (i64, i64, i64, i64, i64, i64, i64, i64);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT o.written, o.created AS awaiting_payment, o.paid, o.cancelled,
                o.paid * coalesce(vo.price_cents, 0) AS revenue_cents,
                (SELECT count(*) FROM order_failures f
                  WHERE f.voucher_id = v.id AND NOT starts_with(f.reason, $2)) AS failed,
                m.refunded, m.flagged
         FROM UNNEST($1::int8[]) WITH ORDINALITY AS v(id, n)
         LEFT JOIN vouchers vo ON vo.id = v.id
         CROSS JOIN LATERAL (
             SELECT count(*) AS written,
                    count(*) FILTER (WHERE status = 'created') AS created,
                    count(*) FILTER (WHERE status IN ('paid', 'confirmed')) AS paid,
                    count(*) FILTER (WHERE status = 'cancelled') AS cancelled
             FROM orders WHERE voucher_id = v.id
         ) o
         CROSS JOIN LATERAL (
             SELECT count(*) FILTER (WHERE p.state IN ('refund_due', 'refunded')) AS refunded,
                    count(*) FILTER (WHERE p.mismatch IS NOT NULL OR p.state = 'refund_failed'
                                      OR p.dispute IN ('open', 'lost')) AS flagged
             FROM payments p JOIN orders po ON po.id = p.order_id
             WHERE po.voucher_id = v.id AND p.state NOT IN ('open', 'closed')
         ) m
         ORDER BY v.n",
    )
    .bind(&ids)
    .bind(FailureReason::DEAD_LETTER_CODE)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(
                written,
                awaiting_payment,
                paid,
                cancelled,
                revenue_cents,
                failed,
                refunded,
                flagged,
            )| {
                OrderCounts {
                    written,
                    awaiting_payment,
                    paid,
                    cancelled,
                    revenue_cents,
                    refunded,
                    flagged,
                    failed,
                }
            },
        )
        .collect())
}

/// Written orders of `voucher` per `bucket_secs`-wide interval of admission time, counted from
/// `from` (bucket 0 starts there): `(bucket, orders)` for the non-empty buckets, in order.
pub async fn admitted_per_bucket(
    db: &PgPool,
    voucher: VoucherId,
    from: DateTime<Utc>,
    bucket_secs: i64,
) -> Result<Vec<(i64, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT floor(extract(epoch FROM admitted_at - $2) / $3)::int8 AS bucket, count(*)
         FROM orders WHERE voucher_id = $1 AND admitted_at >= $2
         GROUP BY 1 ORDER BY 1",
    )
    .bind(voucher.get())
    .bind(from)
    .bind(bucket_secs as f64)
    .fetch_all(db)
    .await
}

/// The first and last admission time of `voucher`'s written orders, if it has any.
pub async fn admission_span(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<Option<(DateTime<Utc>, DateTime<Utc>)>, sqlx::Error> {
    let row: (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = sqlx::query_as(
        "SELECT min(admitted_at), max(admitted_at) FROM orders WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .fetch_one(db)
    .await?;
    Ok(row.0.zip(row.1))
}
