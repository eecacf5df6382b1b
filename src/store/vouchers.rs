//! The `vouchers` table.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::domain::{NewVoucher, OrderId, SaleWindow, UserId, Voucher, VoucherId};

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    title: String,
    description: String,
    price_cents: i64,
    initial_stock: i64,
    stock: i64,
    begins_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    created_at: DateTime<Utc>,
}

impl Row {
    fn into_voucher(self) -> Result<Voucher, sqlx::Error> {
        // The table's CHECK keeps ends_at > begins_at, so this only fails on a corrupt row.
        let window = SaleWindow::new(self.begins_at, self.ends_at)
            .map_err(|e| sqlx::Error::Decode(format!("voucher {}: {e}", self.id).into()))?;
        Ok(Voucher {
            id: VoucherId::from_db(self.id),
            title: self.title,
            description: self.description,
            price_cents: self.price_cents,
            initial_stock: self.initial_stock,
            db_stock: self.stock,
            window,
            created_at: self.created_at,
        })
    }
}

const COLUMNS: &str =
    "id, title, description, price_cents, initial_stock, stock, begins_at, ends_at, created_at";

/// Inserts a voucher inside the caller's transaction.
pub async fn insert(
    conn: &mut PgConnection,
    v: &NewVoucher,
    created_by: UserId,
) -> Result<VoucherId, sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO vouchers
             (title, description, price_cents, initial_stock, stock, begins_at, ends_at, created_by)
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7)
         RETURNING id",
    )
    .bind(&v.title)
    .bind(&v.description)
    .bind(v.price_cents)
    .bind(v.stock.get())
    .bind(v.window.begins_at())
    .bind(v.window.ends_at())
    .bind(created_by.get())
    .fetch_one(conn)
    .await?;
    Ok(VoucherId::from_db(id))
}

/// One voucher, if it exists.
pub async fn get(db: &PgPool, id: VoucherId) -> Result<Option<Voucher>, sqlx::Error> {
    sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM vouchers WHERE id = $1"
    )))
    .bind(id.get())
    .fetch_optional(db)
    .await?
    .map(Row::into_voucher)
    .transpose()
}

/// The newest vouchers first, at most `limit`.
pub async fn list(db: &PgPool, limit: i64) -> Result<Vec<Voucher>, sqlx::Error> {
    sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM vouchers ORDER BY begins_at DESC, id DESC LIMIT $1"
    )))
    .bind(limit)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(Row::into_voucher)
    .collect()
}

/// Vouchers whose sale has not ended before `since`: the ones Redis must hold.
pub async fn live_since(db: &PgPool, since: DateTime<Utc>) -> Result<Vec<Voucher>, sqlx::Error> {
    sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM vouchers WHERE ends_at > $1 ORDER BY id"
    )))
    .bind(since)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(Row::into_voucher)
    .collect()
}

/// The titles of the vouchers among `ids` that exist.
pub async fn titles(
    db: &PgPool,
    ids: &[VoucherId],
) -> Result<std::collections::HashMap<VoucherId, String>, sqlx::Error> {
    let ids: Vec<i64> = ids.iter().map(|v| v.get()).collect();
    let rows: Vec<(i64, String)> =
        sqlx::query_as("SELECT id, title FROM vouchers WHERE id = ANY($1)")
            .bind(&ids)
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, title)| (VoucherId::from_db(id), title))
        .collect())
}

/// The users holding a written order for `voucher`, each with that order.
pub async fn buyers(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<Vec<(UserId, OrderId)>, sqlx::Error> {
    let rows: Vec<(i64, i64)> =
        sqlx::query_as("SELECT user_id, id FROM orders WHERE voucher_id = $1")
            .bind(voucher.get())
            .fetch_all(db)
            .await?;
    rows.into_iter()
        .map(|(user, order)| {
            let order = OrderId::from_db(order).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            Ok((UserId::from_db(user), order))
        })
        .collect()
}

/// Records that a preload holding fencing token `fence` runs now. Returns `false` (and writes
/// nothing) when a newer token already did: the caller's lock has been lost to someone else.
pub async fn record_preload(
    db: &PgPool,
    voucher: VoucherId,
    fence: i64,
) -> Result<bool, sqlx::Error> {
    let updated =
        sqlx::query("UPDATE vouchers SET preload_fence = $2 WHERE id = $1 AND preload_fence < $2")
            .bind(voucher.get())
            .bind(fence)
            .execute(db)
            .await?
            .rows_affected();
    Ok(updated == 1)
}
