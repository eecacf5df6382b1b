//! An order's life after it is written: paid, or cancelled (by its shopper or by the payment
//! deadline) with its unit given back. Every transition is a conditional `UPDATE` on the
//! current status, so a late payment never revives a cancelled order and a second cancel
//! changes nothing; a cancellation writes PostgreSQL's stock and the outbox row that returns the
//! unit to Redis in the same transaction.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use crate::{
    domain::{Canceller, OrderId, UserId, VoucherId},
    infra::stock_move::StockMove,
    infra::store::moves,
};

/// Where a written order stands, read for a transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    /// Awaiting payment until `pay_by`; `overdue` once PostgreSQL's clock has passed it.
    Created {
        voucher: VoucherId,
        pay_by: DateTime<Utc>,
        overdue: bool,
        price_cents: i64,
    },
    Paid,
    /// A free voucher's order: complete once written.
    Confirmed,
    Cancelled,
}

/// The move that gives a cancelled order's unit back and frees its shopper's slot.
pub fn return_of(order: OrderId, user: UserId) -> StockMove {
    StockMove {
        key: moves::return_key(order),
        units: 1,
        release: Some((user, order)),
    }
}

/// status, voucher, pay-by, overdue, price.
type LockedRow = (String, i64, DateTime<Utc>, bool, i64);

/// Locks `user`'s written order `order` in the caller's transaction and reads its state;
/// `None` when PostgreSQL has no such written order of theirs.
pub async fn lock_for_update(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
    user: UserId,
) -> Result<Option<Current>, sqlx::Error> {
    lock(tx, order, Some(user)).await
}

/// Locks written order `order`, whoever's it is (a payment provider's word about it).
pub async fn lock_any(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
) -> Result<Option<Current>, sqlx::Error> {
    lock(tx, order, None).await
}

async fn lock(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
    user: Option<UserId>,
) -> Result<Option<Current>, sqlx::Error> {
    let row: Option<LockedRow> = sqlx::query_as(
        "SELECT o.status, o.voucher_id, o.pay_by, o.pay_by <= now(), v.price_cents
         FROM orders o JOIN vouchers v ON v.id = o.voucher_id
         WHERE o.id = $1 AND ($2::int8 IS NULL OR o.user_id = $2)
         FOR UPDATE OF o",
    )
    .bind(order.as_i64())
    .bind(user.map(UserId::get))
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|(status, voucher, pay_by, overdue, price_cents)| {
        Current::decode(order, &status, voucher, pay_by, overdue, price_cents)
    })
    .transpose()
}

impl Current {
    /// An order's columns (status, voucher, pay-by, whether PostgreSQL's clock passed it,
    /// price) as a `Current`; a status this code does not know is a decoding error.
    pub fn decode(
        order: OrderId,
        status: &str,
        voucher: i64,
        pay_by: DateTime<Utc>,
        overdue: bool,
        price_cents: i64,
    ) -> Result<Self, sqlx::Error> {
        match status {
            "created" => Ok(Self::Created {
                voucher: VoucherId::from_db(voucher),
                pay_by,
                overdue,
                price_cents,
            }),
            "paid" => Ok(Self::Paid),
            "confirmed" => Ok(Self::Confirmed),
            "cancelled" => Ok(Self::Cancelled),
            other => Err(sqlx::Error::Decode(
                format!("order {order}: unreadable status {other:?}").into(),
            )),
        }
    }
}

/// Marks a locked `created` order paid by the hosted payment `session`, with the provider's
/// reference of the money.
pub async fn mark_paid(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
    session: &str,
    reference: &str,
) -> Result<bool, sqlx::Error> {
    let updated = sqlx::query(
        "UPDATE orders SET status = 'paid', paid_at = now(), payment_key = $2, payment_ref = $3
         WHERE id = $1 AND status = 'created'",
    )
    .bind(order.as_i64())
    .bind(session)
    .bind(reference)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(updated == 1)
}

/// Cancels a locked `created` order and gives its unit back in PostgreSQL, recording the move
/// that gives it back in Redis. Returns that move.
pub async fn cancel_locked(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
    user: UserId,
    voucher: VoucherId,
    by: Canceller,
) -> Result<StockMove, sqlx::Error> {
    sqlx::query(
        "UPDATE orders SET status = 'cancelled', cancelled_at = now(), cancelled_by = $2
         WHERE id = $1 AND status = 'created'",
    )
    .bind(order.as_i64())
    .bind(by.as_str())
    .execute(&mut **tx)
    .await?;
    give_back(tx, &[(order, user, voucher)]).await?;
    Ok(return_of(order, user))
}

/// The shop refunds paid order `order` (locked by the caller): cancelled by the shop, its unit
/// given back as a cancellation's, and every payment that took money for it owed back. The
/// voucher and the move that gives the unit back in Redis; `None` when the order is not paid
/// (nothing changed).
pub async fn refund_paid(
    tx: &mut Transaction<'_, Postgres>,
    order: OrderId,
) -> Result<Option<(VoucherId, StockMove)>, sqlx::Error> {
    let row: Option<(i64, i64)> = sqlx::query_as(
        "UPDATE orders SET status = 'cancelled', cancelled_at = now(), cancelled_by = $2
         WHERE id = $1 AND status = 'paid'
         RETURNING user_id, voucher_id",
    )
    .bind(order.as_i64())
    .bind(Canceller::Shop.as_str())
    .fetch_optional(&mut **tx)
    .await?;
    let Some((user, voucher)) = row else {
        return Ok(None);
    };
    let (user, voucher) = (UserId::from_db(user), VoucherId::from_db(voucher));
    sqlx::query(
        "UPDATE payments SET state = 'refund_due', refund_next_at = now(), updated_at = now()
         WHERE order_id = $1 AND state = 'paid'",
    )
    .bind(order.as_i64())
    .execute(&mut **tx)
    .await?;
    give_back(tx, &[(order, user, voucher)]).await?;
    Ok(Some((voucher, return_of(order, user))))
}

/// PostgreSQL's half of giving cancelled orders' units back: each voucher's stock, one outbox
/// row per order; and money held for them that did not pay them (a flagged payment) becomes a
/// refund owed, which the sweep makes.
async fn give_back(
    conn: &mut PgConnection,
    cancelled: &[(OrderId, UserId, VoucherId)],
) -> Result<(), sqlx::Error> {
    let vouchers: Vec<i64> = cancelled.iter().map(|c| c.2.get()).collect();
    // The vouchers' rows locked in id order first, as the order writer locks them: the update
    // alone locked them in its plan's order, and a deadline pass over several sales could
    // deadlock with a writer's batch over the same ones.
    sqlx::query("SELECT 1 FROM vouchers WHERE id = ANY($1) ORDER BY id FOR UPDATE")
        .bind(&vouchers)
        .execute(&mut *conn)
        .await?;
    sqlx::query(
        "UPDATE vouchers v SET stock = v.stock + b.n
         FROM (SELECT id, count(*) AS n FROM UNNEST($1::int8[]) AS u(id) GROUP BY id) b
         WHERE v.id = b.id",
    )
    .bind(&vouchers)
    .execute(&mut *conn)
    .await?;
    for (order, user, voucher) in cancelled {
        moves::record(&mut *conn, *voucher, &return_of(*order, *user)).await?;
    }
    let orders: Vec<i64> = cancelled.iter().map(|c| c.0.as_i64()).collect();
    crate::infra::store::payments::owe_back_flagged(&mut *conn, &orders).await?;
    Ok(())
}

/// Why the deadline pass wrote nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fenced;

/// Cancels up to `limit` orders whose payment deadline has passed, in one transaction that
/// first checks `fence` is still `job`'s latest fencing token (a newer run of the job blocks
/// until this one commits, and this one writes nothing when a newer run began). Orders being
/// paid right now (row locked) are skipped until the next pass, and so are orders whose hosted
/// payment is still open: the provider must close it first (`orders::payment_sweep`), or the payment
/// wins. Returns the cancelled orders'
/// vouchers and the moves that give their units back to Redis.
pub async fn expire_due(
    db: &PgPool,
    job: &str,
    fence: i64,
    limit: i64,
) -> Result<Result<Vec<(VoucherId, StockMove)>, Fenced>, sqlx::Error> {
    let mut tx = db.begin().await?;
    let latest: Option<i64> =
        sqlx::query_scalar("SELECT fence FROM job_runs WHERE name = $1 FOR SHARE")
            .bind(job)
            .fetch_optional(&mut *tx)
            .await?;
    if latest != Some(fence) {
        return Ok(Err(Fenced));
    }
    // Locked first, then cancelled in a statement of its own: a Pay now that recorded its open
    // payment after the first statement's snapshot, and committed before this pass locked the
    // order, is not in that snapshot (a row's re-check under its lock re-reads the order, not
    // its payments); the second statement's snapshot holds it, and the order is left to the
    // payment (the sweep expires that at the provider first).
    let due: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM orders o WHERE status = 'created' AND pay_by <= now()
           AND NOT EXISTS (
               SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.state = 'open'
           )
         ORDER BY pay_by LIMIT $1 FOR UPDATE SKIP LOCKED",
    )
    .bind(limit)
    .fetch_all(&mut *tx)
    .await?;
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "UPDATE orders o SET status = 'cancelled', cancelled_at = now(), cancelled_by = 'deadline'
         WHERE o.id = ANY($1) AND o.status = 'created'
           AND NOT EXISTS (
               SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.state = 'open'
           )
         RETURNING o.id, o.user_id, o.voucher_id",
    )
    .bind(&due)
    .fetch_all(&mut *tx)
    .await?;
    let cancelled = rows
        .into_iter()
        .map(|(id, user, voucher)| {
            Ok((
                OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
                UserId::from_db(user),
                VoucherId::from_db(voucher),
            ))
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    if !cancelled.is_empty() {
        give_back(&mut tx, &cancelled).await?;
    }
    tx.commit().await?;
    Ok(Ok(cancelled
        .into_iter()
        .map(|(order, user, voucher)| (voucher, return_of(order, user)))
        .collect()))
}
