//! The `vouchers` table.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::domain::{NewVoucher, Opening, OrderId, SaleWindow, UserId, Voucher, VoucherId};

#[derive(sqlx::FromRow)]
pub(super) struct Row {
    id: i64,
    title: String,
    description: String,
    price_cents: i64,
    initial_stock: i64,
    added_stock: i64,
    stock: i64,
    begins_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    entries_open_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl Row {
    pub(super) fn into_voucher(self) -> Result<Voucher, sqlx::Error> {
        // The table's CHECK keeps ends_at > begins_at, so this only fails on a corrupt row.
        let window = SaleWindow::new(self.begins_at, self.ends_at)
            .map_err(|e| sqlx::Error::Decode(format!("voucher {}: {e}", self.id).into()))?;
        Ok(Voucher {
            id: VoucherId::from_db(self.id),
            title: self.title,
            description: self.description,
            price_cents: self.price_cents,
            initial_stock: self.initial_stock,
            added_stock: self.added_stock,
            db_stock: self.stock,
            window,
            // The table's CHECK ties `entries_open_at` to the draw.
            opening: self
                .entries_open_at
                .map_or(Opening::FirstCome, |entries_open_at| Opening::Draw {
                    entries_open_at,
                }),
            created_at: self.created_at,
        })
    }
}

pub(super) const COLUMNS: &str =
    "id, title, description, price_cents, initial_stock, added_stock, stock, begins_at, ends_at,
     entries_open_at, created_at";

/// Inserts a voucher inside the caller's transaction.
pub async fn insert(
    conn: &mut PgConnection,
    v: &NewVoucher,
    created_by: UserId,
) -> Result<VoucherId, sqlx::Error> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO vouchers
             (title, description, price_cents, initial_stock, stock, begins_at, ends_at, created_by,
              opening, entries_open_at)
         VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9)
         RETURNING id",
    )
    .bind(&v.title)
    .bind(&v.description)
    .bind(v.price_cents)
    .bind(v.stock.get())
    .bind(v.window.begins_at())
    .bind(v.window.ends_at())
    .bind(created_by.get())
    .bind(v.opening.kind().as_str())
    .bind(v.opening.entries_open_at())
    .fetch_one(conn)
    .await?;
    Ok(VoucherId::from_db(id))
}

/// The largest voucher ID given out so far (0 before the first voucher).
pub async fn largest_id(db: &PgPool) -> Result<i64, sqlx::Error> {
    let largest: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM vouchers")
        .fetch_one(db)
        .await?;
    Ok(largest.unwrap_or(0))
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

/// At most `limit` vouchers, the newest sales first (by their start). Sales not yet ended are
/// kept before ended ones: a long sale that began before hundreds of others is still on and
/// must stay listed, while the oldest ended sales are the ones left out.
pub async fn list(db: &PgPool, limit: i64) -> Result<Vec<Voucher>, sqlx::Error> {
    let mut list = sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM vouchers ORDER BY ends_at <= now(), begins_at DESC, id DESC LIMIT $1"
    )))
    .bind(limit)
    .fetch_all(db)
    .await?
    .into_iter()
    .map(Row::into_voucher)
    .collect::<Result<Vec<Voucher>, _>>()?;
    list.sort_by(|a, b| {
        (b.window.begins_at(), b.id.get()).cmp(&(a.window.begins_at(), a.id.get()))
    });
    Ok(list)
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

/// The end of each sale among `ids` that exists.
pub async fn ends(
    db: &PgPool,
    ids: &[VoucherId],
) -> Result<std::collections::HashMap<VoucherId, DateTime<Utc>>, sqlx::Error> {
    let ids: Vec<i64> = ids.iter().map(|v| v.get()).collect();
    let rows: Vec<(i64, DateTime<Utc>)> =
        sqlx::query_as("SELECT id, ends_at FROM vouchers WHERE id = ANY($1)")
            .bind(&ids)
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(id, ends)| (VoucherId::from_db(id), ends))
        .collect())
}

/// What a restore of a sale's Redis state needs from PostgreSQL, read in one snapshot: the
/// unsold stock counts every stock move listed, and the buyers are the live orders' shoppers.
#[derive(Debug, Clone, Default)]
pub struct RestoreSnapshot {
    pub db_stock: i64,
    pub total_stock: i64,
    /// The keys of every stock move of the sale, applied or not.
    pub moves: Vec<String>,
    /// The shoppers holding a live (not cancelled) written order, each with that order.
    pub buyers: Vec<(UserId, OrderId)>,
    /// The written orders cancelled since.
    pub cancelled: Vec<OrderId>,
    /// A recorded draw's cursor (one past the last rank holding an order) and entrants.
    pub draw: Option<(i64, i64)>,
}

/// Reads [`RestoreSnapshot`] for `voucher` in one repeatable-read transaction, so a
/// cancellation committing meanwhile is either in all three or in none.
pub async fn restore_snapshot(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<RestoreSnapshot, sqlx::Error> {
    let mut tx = db.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .execute(&mut *tx)
        .await?;
    let (db_stock, total_stock): (i64, i64) =
        sqlx::query_as("SELECT stock, initial_stock + added_stock FROM vouchers WHERE id = $1")
            .bind(voucher.get())
            .fetch_one(&mut *tx)
            .await?;
    let moves: Vec<String> =
        sqlx::query_scalar("SELECT key FROM stock_moves WHERE voucher_id = $1")
            .bind(voucher.get())
            .fetch_all(&mut *tx)
            .await?;
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT user_id, id FROM orders WHERE voucher_id = $1 AND status <> 'cancelled'",
    )
    .bind(voucher.get())
    .fetch_all(&mut *tx)
    .await?;
    let cancelled: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM orders WHERE voucher_id = $1 AND status = 'cancelled'")
            .bind(voucher.get())
            .fetch_all(&mut *tx)
            .await?;
    let draw = super::draws::recorded_cursor(&mut tx, voucher).await?;
    tx.commit().await?;
    let buyers = rows
        .into_iter()
        .map(|(user, order)| {
            let order = OrderId::from_db(order).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            Ok((UserId::from_db(user), order))
        })
        .collect::<Result<_, sqlx::Error>>()?;
    let cancelled = cancelled
        .into_iter()
        .map(|id| OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e))))
        .collect::<Result<_, sqlx::Error>>()?;
    Ok(RestoreSnapshot {
        db_stock,
        total_stock,
        moves,
        buyers,
        cancelled,
        draw,
    })
}

/// Ends `voucher`'s sale now (a sale that had not begun gets a start just before), unless it
/// has ended already. Returns the sale's end afterwards, `None` for an unknown voucher.
pub async fn end_now(
    conn: &mut PgConnection,
    voucher: VoucherId,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE vouchers SET
             ends_at = LEAST(ends_at, date_trunc('milliseconds', now())),
             begins_at = LEAST(begins_at,
                 LEAST(ends_at, date_trunc('milliseconds', now())) - interval '1 millisecond')
         WHERE id = $1
         RETURNING ends_at",
    )
    .bind(voucher.get())
    .fetch_optional(conn)
    .await
}

/// Adds `units` to `voucher`'s offered and unsold stock, inside the caller's transaction.
/// Returns the new (total offered, unsold) stock.
pub async fn add_stock(
    conn: &mut PgConnection,
    voucher: VoucherId,
    units: i64,
) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query_as(
        "UPDATE vouchers SET added_stock = added_stock + $2, stock = stock + $2
         WHERE id = $1
         RETURNING initial_stock + added_stock, stock",
    )
    .bind(voucher.get())
    .bind(units)
    .fetch_one(conn)
    .await
}

/// Locks `voucher`'s row for an admin's change, inside the caller's transaction: `None` for an
/// unknown voucher.
pub async fn lock(
    conn: &mut PgConnection,
    voucher: VoucherId,
) -> Result<Option<Voucher>, sqlx::Error> {
    sqlx::query_as::<_, Row>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM vouchers WHERE id = $1 FOR UPDATE"
    )))
    .bind(voucher.get())
    .fetch_optional(conn)
    .await?
    .map(Row::into_voucher)
    .transpose()
}

/// Records that a preload holding fencing token `fence` runs now. Returns `false` (and writes
/// nothing) when a newer token already did: the caller's lock has been lost to someone else.
pub async fn record_preload(
    db: &PgPool,
    voucher: VoucherId,
    fence: i64,
) -> Result<bool, sqlx::Error> {
    let mut conn = db.acquire().await?;
    record_fence(&mut conn, voucher, fence).await
}

/// [`record_preload`] inside the caller's transaction (an admin's change to a sale, under the
/// same lock): the row stays locked until the transaction ends.
pub async fn record_fence(
    conn: &mut PgConnection,
    voucher: VoucherId,
    fence: i64,
) -> Result<bool, sqlx::Error> {
    let updated =
        sqlx::query("UPDATE vouchers SET preload_fence = $2 WHERE id = $1 AND preload_fence < $2")
            .bind(voucher.get())
            .bind(fence)
            .execute(conn)
            .await?
            .rows_affected();
    Ok(updated == 1)
}

/// Writes an admin's edit of `voucher` inside the caller's transaction (which holds its row):
/// every field of `v`; the units offered become `v.stock` (none added since), and the units
/// left move by the same difference.
pub async fn revise(
    conn: &mut PgConnection,
    voucher: VoucherId,
    v: &NewVoucher,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE vouchers SET title = $2, description = $3, price_cents = $4,
             stock = stock + $5 - initial_stock - added_stock, initial_stock = $5, added_stock = 0,
             begins_at = $6, ends_at = $7, opening = $8, entries_open_at = $9
         WHERE id = $1",
    )
    .bind(voucher.get())
    .bind(&v.title)
    .bind(&v.description)
    .bind(v.price_cents)
    .bind(v.stock.get())
    .bind(v.window.begins_at())
    .bind(v.window.ends_at())
    .bind(v.opening.kind().as_str())
    .bind(v.opening.entries_open_at())
    .execute(conn)
    .await?;
    Ok(())
}
