//! The worker's idempotent batch write into `orders` and `order_failures`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::decide::{decide, Decision, Existing, QueuedOrder};
use crate::domain::{FailureReason, OrderId, UserId, VoucherId};

/// Writes a batch in one transaction: locks the batch's vouchers, decides each order against
/// what is already there ([`decide`]), inserts the new rows and the rejections, and decrements
/// each voucher's stock under `stock >= n`. A written order awaits payment until `pay_within`
/// from its commit, unless its voucher is free (then it is `confirmed` at once). Idempotent by order ID: a redelivered order is reported, never written
/// twice.
pub async fn write_batch(
    db: &PgPool,
    batch: &[QueuedOrder],
    pay_within: std::time::Duration,
) -> Result<Vec<Decision>, sqlx::Error> {
    let mut tx = db.begin().await?;
    let existing = read_existing(&mut tx, batch).await?;
    let decisions = decide(batch, &existing);

    let mut rows = NewRows::default();
    for (q, d) in batch.iter().zip(&decisions) {
        match d {
            Decision::Write => rows.write(q),
            Decision::Reject(reason) => rows.reject(q, *reason),
            Decision::AlreadyWritten | Decision::AlreadyFailed(_) => {}
        }
    }
    rows.insert(&mut tx, pay_within).await?;
    tx.commit().await?;
    Ok(decisions)
}

/// What PostgreSQL already holds about `batch`, read under the batch's vouchers' row locks
/// (taken in id order: concurrent writers of one voucher serialise there, in one order).
async fn read_existing(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    batch: &[QueuedOrder],
) -> Result<Existing, sqlx::Error> {
    let mut vouchers: Vec<i64> = batch.iter().map(|q| q.voucher.get()).collect();
    vouchers.sort_unstable();
    vouchers.dedup();
    let order_ids: Vec<i64> = batch.iter().map(|q| q.order.as_i64()).collect();
    let users: Vec<i64> = batch.iter().map(|q| q.user.get()).collect();
    let batch_vouchers: Vec<i64> = batch.iter().map(|q| q.voucher.get()).collect();

    let stock: Vec<(i64, i64)> =
        sqlx::query_as("SELECT id, stock FROM vouchers WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(&vouchers)
            .fetch_all(&mut **tx)
            .await?;
    let written: Vec<(i64, i64, i64)> =
        sqlx::query_as("SELECT id, voucher_id, user_id FROM orders WHERE id = ANY($1)")
            .bind(&order_ids)
            .fetch_all(&mut **tx)
            .await?;
    let failed: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT id, user_id, reason FROM order_failures WHERE id = ANY($1)")
            .bind(&order_ids)
            .fetch_all(&mut **tx)
            .await?;
    // One probe of the live-order index per shopper, whatever the planner thinks of the table:
    // as a join, a table it holds few statistics on (a new shop, a sale's first minutes after a
    // bulk load) was sorted whole for every batch (10 ms a batch of 500 at 20,000 rows, against
    // 0.9 ms probed; issue #53).
    let holders: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT b.voucher_id, b.user_id
         FROM UNNEST($1::int8[], $2::int8[]) AS b(voucher_id, user_id)
         CROSS JOIN LATERAL (
           SELECT 1 FROM orders o
           WHERE o.voucher_id = b.voucher_id AND o.user_id = b.user_id
             AND o.status <> 'cancelled'
           LIMIT 1) AS held",
    )
    .bind(&batch_vouchers)
    .bind(&users)
    .fetch_all(&mut **tx)
    .await?;

    Ok(Existing {
        stock: stock
            .into_iter()
            .map(|(v, s)| (VoucherId::from_db(v), s))
            .collect(),
        written: written
            .into_iter()
            .filter_map(|(id, v, u)| {
                Some((
                    OrderId::from_db(id).ok()?,
                    (VoucherId::from_db(v), UserId::from_db(u)),
                ))
            })
            .collect(),
        failed: failed
            .into_iter()
            .filter_map(|(id, u, r)| Some((OrderId::from_db(id).ok()?, UserId::from_db(u), r)))
            .map(|(id, u, r)| Ok(((id, u), super::reason(&r)?)))
            .collect::<Result<_, sqlx::Error>>()?,
        holders: holders
            .into_iter()
            .map(|(v, u)| (VoucherId::from_db(v), UserId::from_db(u)))
            .collect(),
    })
}

#[derive(Default)]
struct NewRows {
    ids: Vec<i64>,
    vouchers: Vec<i64>,
    users: Vec<i64>,
    admitted: Vec<DateTime<Utc>>,
    per_voucher: HashMap<i64, i64>,
    rejected_ids: Vec<i64>,
    rejected_vouchers: Vec<i64>,
    rejected_users: Vec<i64>,
    reasons: Vec<String>,
}

impl NewRows {
    fn write(&mut self, q: &QueuedOrder) {
        self.ids.push(q.order.as_i64());
        self.vouchers.push(q.voucher.get());
        self.users.push(q.user.get());
        self.admitted.push(q.order.issued_at());
        *self.per_voucher.entry(q.voucher.get()).or_default() += 1;
    }

    fn reject(&mut self, q: &QueuedOrder, reason: FailureReason) {
        self.rejected_ids.push(q.order.as_i64());
        self.rejected_vouchers.push(q.voucher.get());
        self.rejected_users.push(q.user.get());
        self.reasons.push(reason.to_string());
    }

    async fn insert(
        self,
        tx: &mut sqlx::PgConnection,
        pay_within: std::time::Duration,
    ) -> Result<(), sqlx::Error> {
        if !self.ids.is_empty() {
            let pay_within_ms = i64::try_from(pay_within.as_millis()).unwrap_or(i64::MAX);
            sqlx::query(
                // A free voucher's order is complete once written (`confirmed`: nothing to
                // pay, no deadline); the others await payment until `pay_by`.
                "INSERT INTO orders (id, voucher_id, user_id, admitted_at, pay_by, status)
                 SELECT b.id, b.voucher_id, b.user_id, b.admitted_at,
                        now() + make_interval(secs => $5::float8 / 1000),
                        CASE WHEN v.price_cents = 0 THEN 'confirmed' ELSE 'created' END
                 FROM UNNEST($1::int8[], $2::int8[], $3::int8[], $4::timestamptz[])
                      AS b(id, voucher_id, user_id, admitted_at)
                 JOIN vouchers v ON v.id = b.voucher_id",
            )
            .bind(&self.ids)
            .bind(&self.vouchers)
            .bind(&self.users)
            .bind(&self.admitted)
            .bind(pay_within_ms as f64)
            .execute(&mut *tx)
            .await?;
            let (vs, ns): (Vec<i64>, Vec<i64>) = self.per_voucher.into_iter().unzip();
            let updated = sqlx::query(
                "UPDATE vouchers v SET stock = v.stock - b.n
                 FROM UNNEST($1::int8[], $2::int8[]) AS b(id, n)
                 WHERE v.id = b.id AND v.stock >= b.n",
            )
            .bind(&vs)
            .bind(&ns)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if updated != vs.len() as u64 {
                // decide() allots at most the locked stock, so this means a bug, not a race.
                return Err(sqlx::Error::Protocol(
                    "stock decrement matched fewer vouchers than allotted".into(),
                ));
            }
        }
        if !self.rejected_ids.is_empty() {
            record_failures(
                &mut *tx,
                &self.rejected_ids,
                &self.rejected_vouchers,
                &self.rejected_users,
                &self.reasons,
            )
            .await?;
        }
        Ok(())
    }
}

async fn record_failures(
    conn: &mut sqlx::PgConnection,
    ids: &[i64],
    vouchers: &[i64],
    users: &[i64],
    reasons: &[String],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO order_failures (id, voucher_id, user_id, reason)
         SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::int8[], $4::text[])
         ON CONFLICT (id, user_id) DO NOTHING",
    )
    .bind(ids)
    .bind(vouchers)
    .bind(users)
    .bind(reasons)
    .execute(conn)
    .await?;
    Ok(())
}

/// What PostgreSQL holds for an order given up after too many deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeadLettered {
    /// Written on an earlier delivery (whose settling failed): settle it as written.
    Written,
    /// Failed, for this reason: the first one recorded (a `sold_out` decided on an earlier
    /// delivery stays `sold_out`), so the settling gives back what that reason gives back.
    Failed(FailureReason),
}

/// Gives up on one order: under its voucher's row lock, as a batch write takes it (so a
/// consumer still writing the same entry commits first, or after this and finds it failed),
/// the order is found written, or recorded as failed with `reason` unless it had failed
/// already.
pub async fn dead_letter(
    db: &PgPool,
    q: &QueuedOrder,
    reason: FailureReason,
) -> Result<DeadLettered, sqlx::Error> {
    let mut tx = db.begin().await?;
    sqlx::query("SELECT 1 FROM vouchers WHERE id = $1 FOR UPDATE")
        .bind(q.voucher.get())
        .execute(&mut *tx)
        .await?;
    let written: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM orders WHERE id = $1 AND user_id = $2)")
            .bind(q.order.as_i64())
            .bind(q.user.get())
            .fetch_one(&mut *tx)
            .await?;
    if written {
        tx.commit().await?;
        return Ok(DeadLettered::Written);
    }
    let held: String = sqlx::query_scalar(
        "WITH added AS (
             INSERT INTO order_failures (id, voucher_id, user_id, reason) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id, user_id) DO NOTHING
             RETURNING reason)
         SELECT reason FROM added
         UNION ALL
         SELECT reason FROM order_failures WHERE id = $1 AND user_id = $3
         LIMIT 1",
    )
    .bind(q.order.as_i64())
    .bind(q.voucher.get())
    .bind(q.user.get())
    .bind(reason.to_string())
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    FailureReason::try_from(held)
        .map(DeadLettered::Failed)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))
}
