//! The `orders` and `order_failures` tables: the worker's idempotent batch write, and reads.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::{OrderId, OrderStatus, UserId, VoucherId};

/// An order taken off the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedOrder {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub user: UserId,
}

/// How the reason of a dead-lettered order starts (the worker gave up delivering it).
pub const DEAD_LETTER_PREFIX: &str = "dead_letter";

/// Why the worker refused an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// No such voucher in PostgreSQL.
    UnknownVoucher,
    /// PostgreSQL's stock is spent (Redis admitted more than it should have, after a state loss).
    SoldOut,
    /// The shopper already holds a written order for this voucher.
    AlreadyBought,
}

impl RejectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownVoucher => "unknown_voucher",
            Self::SoldOut => "sold_out",
            Self::AlreadyBought => "already_bought",
        }
    }
}

/// What one batch write did with one order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Written now.
    Write,
    /// Written by an earlier delivery (redelivery after a crash): nothing to do again.
    AlreadyWritten,
    /// Refused by an earlier delivery, with that reason.
    AlreadyFailed(String),
    /// Refused now.
    Reject(RejectReason),
}

/// What PostgreSQL already holds for a batch, read under the vouchers' row locks.
#[derive(Debug, Default)]
pub struct Existing {
    /// Remaining stock of each voucher of the batch that exists.
    pub stock: HashMap<VoucherId, i64>,
    pub written: HashSet<OrderId>,
    pub failed: HashMap<OrderId, String>,
    /// (voucher, user) pairs with a written order.
    pub holders: HashSet<(VoucherId, UserId)>,
}

/// Decides each order of a batch, in order. Pure: the rules of the write, testable alone.
pub fn decide(batch: &[QueuedOrder], existing: &Existing) -> Vec<Decision> {
    let mut stock = existing.stock.clone();
    let mut holders = existing.holders.clone();
    let mut seen = HashSet::new();
    batch
        .iter()
        .map(|q| {
            if existing.written.contains(&q.order) {
                return Decision::AlreadyWritten;
            }
            if let Some(reason) = existing.failed.get(&q.order) {
                return Decision::AlreadyFailed(reason.clone());
            }
            if !seen.insert(q.order) {
                // The same entry twice in one batch: the first occurrence decides.
                return Decision::AlreadyWritten;
            }
            let Some(left) = stock.get_mut(&q.voucher) else {
                return Decision::Reject(RejectReason::UnknownVoucher);
            };
            if holders.contains(&(q.voucher, q.user)) {
                return Decision::Reject(RejectReason::AlreadyBought);
            }
            if *left <= 0 {
                return Decision::Reject(RejectReason::SoldOut);
            }
            *left -= 1;
            holders.insert((q.voucher, q.user));
            Decision::Write
        })
        .collect()
}

/// Writes a batch in one transaction: locks the batch's vouchers, decides each order against
/// what is already there ([`decide`]), inserts the new rows and the rejections, and decrements
/// each voucher's stock under `stock >= n`. Idempotent by order ID: a redelivered order is
/// reported, never written twice.
pub async fn write_batch(db: &PgPool, batch: &[QueuedOrder]) -> Result<Vec<Decision>, sqlx::Error> {
    let mut tx = db.begin().await?;
    let mut vouchers: Vec<i64> = batch.iter().map(|q| q.voucher.get()).collect();
    vouchers.sort_unstable();
    vouchers.dedup();
    let order_ids: Vec<i64> = batch.iter().map(|q| q.order.as_i64()).collect();
    let users: Vec<i64> = batch.iter().map(|q| q.user.get()).collect();
    let batch_vouchers: Vec<i64> = batch.iter().map(|q| q.voucher.get()).collect();

    // Row locks in id order: concurrent writers of one voucher serialise here, in one order.
    let stock: Vec<(i64, i64)> =
        sqlx::query_as("SELECT id, stock FROM vouchers WHERE id = ANY($1) ORDER BY id FOR UPDATE")
            .bind(&vouchers)
            .fetch_all(&mut *tx)
            .await?;
    let written: Vec<i64> = sqlx::query_scalar("SELECT id FROM orders WHERE id = ANY($1)")
        .bind(&order_ids)
        .fetch_all(&mut *tx)
        .await?;
    let failed: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, reason FROM order_failures WHERE id = ANY($1)")
            .bind(&order_ids)
            .fetch_all(&mut *tx)
            .await?;
    let holders: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT o.voucher_id, o.user_id FROM orders o
         JOIN UNNEST($1::int8[], $2::int8[]) AS b(voucher_id, user_id)
           ON o.voucher_id = b.voucher_id AND o.user_id = b.user_id",
    )
    .bind(&batch_vouchers)
    .bind(&users)
    .fetch_all(&mut *tx)
    .await?;

    let existing = Existing {
        stock: stock
            .into_iter()
            .map(|(v, s)| (VoucherId::from_db(v), s))
            .collect(),
        written: written
            .into_iter()
            .filter_map(|id| OrderId::from_db(id).ok())
            .collect(),
        failed: failed
            .into_iter()
            .filter_map(|(id, r)| OrderId::from_db(id).ok().map(|id| (id, r)))
            .collect(),
        holders: holders
            .into_iter()
            .map(|(v, u)| (VoucherId::from_db(v), UserId::from_db(u)))
            .collect(),
    };
    let decisions = decide(batch, &existing);

    let mut rows = NewRows::default();
    for (q, d) in batch.iter().zip(&decisions) {
        match d {
            Decision::Write => rows.write(q),
            Decision::Reject(reason) => rows.reject(q, reason.as_str()),
            Decision::AlreadyWritten | Decision::AlreadyFailed(_) => {}
        }
    }
    rows.insert(&mut tx).await?;
    tx.commit().await?;
    Ok(decisions)
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

    fn reject(&mut self, q: &QueuedOrder, reason: &str) {
        self.rejected_ids.push(q.order.as_i64());
        self.rejected_vouchers.push(q.voucher.get());
        self.rejected_users.push(q.user.get());
        self.reasons.push(reason.to_owned());
    }

    async fn insert(self, tx: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
        if !self.ids.is_empty() {
            sqlx::query(
                "INSERT INTO orders (id, voucher_id, user_id, admitted_at)
                 SELECT * FROM UNNEST($1::int8[], $2::int8[], $3::int8[], $4::timestamptz[])",
            )
            .bind(&self.ids)
            .bind(&self.vouchers)
            .bind(&self.users)
            .bind(&self.admitted)
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
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(ids)
    .bind(vouchers)
    .bind(users)
    .bind(reasons)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records one order as failed (dead letter). Idempotent. Returns the reason on record, which
/// is an earlier one if the order had already failed.
pub async fn record_failure(db: &PgPool, q: &QueuedOrder, reason: &str) -> Result<(), sqlx::Error> {
    let mut conn = db.acquire().await?;
    record_failures(
        &mut conn,
        &[q.order.as_i64()],
        &[q.voucher.get()],
        &[q.user.get()],
        &[reason.to_owned()],
    )
    .await
}

/// An order's state as PostgreSQL knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOrder {
    pub order: OrderId,
    pub voucher: VoucherId,
    pub status: OrderStatus,
}

/// `order` if it belongs to `user` and PostgreSQL has it (written or failed).
pub async fn find_for_user(
    db: &PgPool,
    order: OrderId,
    user: UserId,
) -> Result<Option<StoredOrder>, sqlx::Error> {
    let row: Option<(i64, Option<String>)> = sqlx::query_as(
        "SELECT voucher_id, NULL::text FROM orders WHERE id = $1 AND user_id = $2
         UNION ALL
         SELECT voucher_id, reason FROM order_failures WHERE id = $1 AND user_id = $2
         LIMIT 1",
    )
    .bind(order.as_i64())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(voucher, reason)| StoredOrder {
        order,
        voucher: VoucherId::from_db(voucher),
        status: match reason {
            None => OrderStatus::Created,
            Some(reason) => OrderStatus::Failed { reason },
        },
    }))
}

/// `user`'s orders known to PostgreSQL, newest first.
pub async fn list_for_user(
    db: &PgPool,
    user: UserId,
    limit: i64,
) -> Result<Vec<StoredOrder>, sqlx::Error> {
    let rows: Vec<(i64, i64, Option<String>)> = sqlx::query_as(
        "SELECT id, voucher_id, reason FROM (
             SELECT id, voucher_id, NULL::text AS reason FROM orders WHERE user_id = $1
             UNION ALL
             SELECT id, voucher_id, reason FROM order_failures WHERE user_id = $1
         ) o ORDER BY id DESC LIMIT $2",
    )
    .bind(user.get())
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, voucher, reason)| {
            Some(StoredOrder {
                order: OrderId::from_db(id).ok()?,
                voucher: VoucherId::from_db(voucher),
                status: match reason {
                    None => OrderStatus::Created,
                    Some(reason) => OrderStatus::Failed { reason },
                },
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(order: u32, voucher: i64, user: i64) -> QueuedOrder {
        QueuedOrder {
            order: OrderId::from_parts(1, order).expect("fits"),
            voucher: VoucherId::from_db(voucher),
            user: UserId::from_db(user),
        }
    }

    #[test]
    fn stock_is_allotted_in_queue_order_and_never_exceeded() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 2)]),
            ..Existing::default()
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(3, 1, 12)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::Write,
                Decision::Write,
                Decision::Reject(RejectReason::SoldOut)
            ]
        );
    }

    #[test]
    fn redelivered_orders_are_not_written_again() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 5)]),
            written: HashSet::from([q(1, 1, 10).order]),
            failed: HashMap::from([(q(2, 1, 11).order, "sold_out".to_owned())]),
            holders: HashSet::from([(VoucherId::from_db(1), UserId::from_db(10))]),
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(1, 1, 10)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::AlreadyWritten,
                Decision::AlreadyFailed("sold_out".into()),
                Decision::AlreadyWritten
            ]
        );
    }

    #[test]
    fn one_live_order_per_shopper_and_unknown_vouchers_are_refused() {
        let existing = Existing {
            stock: HashMap::from([(VoucherId::from_db(1), 5)]),
            holders: HashSet::from([(VoucherId::from_db(1), UserId::from_db(10))]),
            ..Existing::default()
        };
        let batch = [q(1, 1, 10), q(2, 1, 11), q(3, 1, 11), q(4, 2, 11)];
        assert_eq!(
            decide(&batch, &existing),
            vec![
                Decision::Reject(RejectReason::AlreadyBought),
                Decision::Write,
                Decision::Reject(RejectReason::AlreadyBought),
                Decision::Reject(RejectReason::UnknownVoucher),
            ]
        );
    }
}

/// What PostgreSQL holds for one voucher's orders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Orders written.
    pub written: i64,
    /// Orders the worker refused (sold out in PostgreSQL, already bought, unknown voucher);
    /// the ones it gave up delivering are not counted here (see the dead-letter stream).
    pub failed: i64,
}

/// The [`Tally`] of each voucher, in the order given.
pub async fn tallies(db: &PgPool, vouchers: &[VoucherId]) -> Result<Vec<Tally>, sqlx::Error> {
    let ids: Vec<i64> = vouchers.iter().map(|v| v.get()).collect();
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT
             (SELECT count(*) FROM orders o WHERE o.voucher_id = v.id),
             (SELECT count(*) FROM order_failures f
               WHERE f.voucher_id = v.id AND NOT starts_with(f.reason, $2))
         FROM UNNEST($1::int8[]) WITH ORDINALITY AS v(id, n)
         ORDER BY v.n",
    )
    .bind(&ids)
    .bind(DEAD_LETTER_PREFIX)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(written, failed)| Tally { written, failed })
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
