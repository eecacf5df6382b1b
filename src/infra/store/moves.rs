//! The `stock_moves` outbox: units going back to a sale's Redis stock (a cancelled order's unit,
//! an admin's top-up). A row is written in the same transaction as PostgreSQL's own stock
//! change, applied to Redis by `lua/apply_move.lua` (idempotent by its key), then marked applied.

use sqlx::{PgConnection, PgPool};

use crate::{
    domain::{OrderId, UserId, VoucherId},
    infra::stock_move::StockMove,
};

/// The outbox key of a cancelled order's unit.
pub fn return_key(order: OrderId) -> String {
    format!("return:{order}")
}

/// The outbox key of a top-up of `voucher` made with the client's idempotency key. Scoped to
/// the voucher: the same key sent for another sale is that sale's own top-up (a key names a
/// request to one resource), never taken for the first sale's.
pub fn addition_key(voucher: VoucherId, idempotency_key: &str) -> String {
    format!("add:{voucher}:{idempotency_key}")
}

/// A move waiting to be applied to Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMove {
    pub voucher: VoucherId,
    pub step: StockMove,
}

/// Records `step` of `voucher` in the outbox, in the caller's transaction: `None` when it is
/// new; the move as first recorded when its key is already there (a repeated request), so the
/// caller applies what was recorded, not what the repeat asked for.
pub async fn record(
    conn: &mut PgConnection,
    voucher: VoucherId,
    step: &StockMove,
) -> Result<Option<StockMove>, sqlx::Error> {
    let (user, order) = step
        .release
        .map_or((None, None), |(u, o)| (Some(u.get()), Some(o.as_i64())));
    let inserted = sqlx::query(
        "INSERT INTO stock_moves (key, voucher_id, units, user_id, order_id)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING",
    )
    .bind(&step.key)
    .bind(voucher.get())
    .bind(step.units)
    .bind(user)
    .bind(order)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if inserted == 1 {
        return Ok(None);
    }
    Ok(Some(find(conn, voucher, &step.key).await?.ok_or_else(
        || {
            sqlx::Error::Protocol(format!(
                "stock move {} conflicted but is not there",
                step.key
            ))
        },
    )?))
}

/// The move recorded under `key` for `voucher`, if any (a repeated request's first one).
/// Keys name their voucher (a return its order, a top-up its sale): a row found is this
/// voucher's, and a key of another's is a bug to stop on, not a move to apply here.
pub async fn find(
    conn: &mut PgConnection,
    voucher: VoucherId,
    key: &str,
) -> Result<Option<StockMove>, sqlx::Error> {
    let row: Option<MoveRow> = sqlx::query_as(
        "SELECT key, voucher_id, units, user_id, order_id FROM stock_moves
         WHERE key = $1 AND voucher_id = $2",
    )
    .bind(key)
    .bind(voucher.get())
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|r| decode(r).map(|m| m.step)).transpose()
}

/// A `stock_moves` row: key, voucher, units, shopper, order.
type MoveRow = (String, i64, i64, Option<i64>, Option<i64>);

/// Moves not yet applied, oldest first, at most `limit`.
pub async fn pending(db: &PgPool, limit: i64) -> Result<Vec<PendingMove>, sqlx::Error> {
    let rows: Vec<MoveRow> = sqlx::query_as(
        "SELECT key, voucher_id, units, user_id, order_id FROM stock_moves
         WHERE applied_at IS NULL ORDER BY created_at LIMIT $1",
    )
    .bind(limit)
    .fetch_all(db)
    .await?;
    rows.into_iter().map(decode).collect()
}

fn decode((key, voucher, units, user, order): MoveRow) -> Result<PendingMove, sqlx::Error> {
    let release = match (user, order) {
        (Some(u), Some(o)) => Some((
            UserId::from_db(u),
            OrderId::from_db(o).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        )),
        _ => None,
    };
    Ok(PendingMove {
        voucher: VoucherId::from_db(voucher),
        step: StockMove {
            key,
            units,
            release,
        },
    })
}

/// Marks moves applied (Redis has them, or has no sale state to apply them to).
pub async fn mark_applied(db: &PgPool, keys: &[String]) -> Result<(), sqlx::Error> {
    if keys.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE stock_moves SET applied_at = now() WHERE key = ANY($1) AND applied_at IS NULL",
    )
    .bind(keys)
    .execute(db)
    .await?;
    Ok(())
}

/// Moves still pending (tests: quiescence means none).
#[cfg(feature = "testing")]
pub async fn pending_count(db: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM stock_moves WHERE applied_at IS NULL")
        .fetch_one(db)
        .await
}
