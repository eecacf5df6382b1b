//! The `draws` and `draw_entries` tables: a draw sale's secret seed and, once drawn, its
//! ranking (design.md decision 34).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::domain::{UserId, VoucherId};

/// A draw as PostgreSQL holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawRow {
    pub seed: [u8; 32],
    pub commitment: [u8; 32],
    /// When the ranking was recorded, with how many entrants.
    pub recorded: Option<(DateTime<Utc>, i64)>,
}

fn bytes32(raw: Vec<u8>) -> Result<[u8; 32], sqlx::Error> {
    raw.try_into()
        .map_err(|_| sqlx::Error::Decode("a draw's seed, commitment or tag is not 32 bytes".into()))
}

/// Stores a new draw sale's seed and commitment, in the transaction that creates the voucher.
pub async fn insert(
    conn: &mut PgConnection,
    voucher: VoucherId,
    seed: &[u8; 32],
    commitment: &[u8; 32],
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO draws (voucher_id, seed, commitment) VALUES ($1, $2, $3)")
        .bind(voucher.get())
        .bind(seed.as_slice())
        .bind(commitment.as_slice())
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(sqlx::FromRow)]
struct Row {
    seed: Vec<u8>,
    commitment: Vec<u8>,
    drawn_at: Option<DateTime<Utc>>,
    entrants: Option<i32>,
}

/// `voucher`'s draw, if it is a draw sale.
pub async fn get(db: &PgPool, voucher: VoucherId) -> Result<Option<DrawRow>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT seed, commitment, drawn_at, entrants FROM draws WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .fetch_optional(db)
    .await?;
    row.map(|r| {
        Ok(DrawRow {
            seed: bytes32(r.seed)?,
            commitment: bytes32(r.commitment)?,
            recorded: r.drawn_at.zip(r.entrants.map(i64::from)),
        })
    })
    .transpose()
}

/// Draw sales whose ranking is not recorded and whose sale has not ended at `now`, with their
/// start, soonest first: the draws an instance waits for.
pub async fn unrecorded(
    db: &PgPool,
    now: DateTime<Utc>,
) -> Result<Vec<(VoucherId, DateTime<Utc>)>, sqlx::Error> {
    let rows: Vec<(i64, DateTime<Utc>)> = sqlx::query_as(
        "SELECT v.id, v.begins_at FROM draws d JOIN vouchers v ON v.id = d.voucher_id
         WHERE d.drawn_at IS NULL AND v.ends_at > $1
         ORDER BY v.begins_at, v.id",
    )
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, begins)| (VoucherId::from_db(id), begins))
        .collect())
}

/// Records `voucher`'s ranking (user, tag; rank 0 first) once: `false` when it was recorded
/// before (another instance, or this one before a crash), and then nothing is written.
pub async fn record(
    db: &PgPool,
    voucher: VoucherId,
    ranking: &[(UserId, [u8; 32])],
) -> Result<bool, sqlx::Error> {
    const CHUNK: usize = 10_000;
    let mut tx = db.begin().await?;
    let open: Option<bool> =
        sqlx::query_scalar("SELECT drawn_at IS NULL FROM draws WHERE voucher_id = $1 FOR UPDATE")
            .bind(voucher.get())
            .fetch_optional(&mut *tx)
            .await?;
    if open != Some(true) {
        return Ok(false);
    }
    for (n, chunk) in ranking.chunks(CHUNK).enumerate() {
        let first = i32::try_from(n * CHUNK).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
        let users: Vec<i64> = chunk.iter().map(|(u, _)| u.get()).collect();
        let tags: Vec<Vec<u8>> = chunk.iter().map(|(_, t)| t.to_vec()).collect();
        sqlx::query(
            "INSERT INTO draw_entries (voucher_id, rank, user_id, tag)
             SELECT $1, $2 + ord::int - 1, u, t
             FROM unnest($3::bigint[], $4::bytea[]) WITH ORDINALITY AS e(u, t, ord)",
        )
        .bind(voucher.get())
        .bind(first)
        .bind(&users)
        .bind(&tags)
        .execute(&mut *tx)
        .await?;
    }
    let entrants = i32::try_from(ranking.len()).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query("UPDATE draws SET drawn_at = now(), entrants = $2 WHERE voucher_id = $1")
        .bind(voucher.get())
        .bind(entrants)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

/// `user`'s rank and tag in `voucher`'s recorded ranking.
pub async fn rank_of(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<i64>, sqlx::Error> {
    let rank: Option<i32> =
        sqlx::query_scalar("SELECT rank FROM draw_entries WHERE voucher_id = $1 AND user_id = $2")
            .bind(voucher.get())
            .bind(user.get())
            .fetch_optional(db)
            .await?;
    Ok(rank.map(i64::from))
}

/// The user IDs of ranks `from` .. `from + n` of `voucher`'s recorded ranking, in rank order.
pub async fn ranks(
    db: &PgPool,
    voucher: VoucherId,
    from: i64,
    n: i64,
) -> Result<Vec<UserId>, sqlx::Error> {
    let users: Vec<i64> = sqlx::query_scalar(
        "SELECT user_id FROM draw_entries WHERE voucher_id = $1 AND rank >= $2
         ORDER BY rank LIMIT $3",
    )
    .bind(voucher.get())
    .bind(from)
    .bind(n)
    .fetch_all(db)
    .await?;
    Ok(users.into_iter().map(UserId::from_db).collect())
}

/// Every tag of `voucher`'s recorded ranking, ascending (rank order).
pub async fn tags(db: &PgPool, voucher: VoucherId) -> Result<Vec<[u8; 32]>, sqlx::Error> {
    let tags: Vec<Vec<u8>> =
        sqlx::query_scalar("SELECT tag FROM draw_entries WHERE voucher_id = $1 ORDER BY rank")
            .bind(voucher.get())
            .fetch_all(db)
            .await?;
    tags.into_iter().map(bytes32).collect()
}

/// A recorded draw's cursor (one past the last rank whose entrant ever held an order of the
/// sale) and entrants, inside the caller's snapshot; `None` for a draw not recorded (or a
/// first-come sale).
pub async fn recorded_cursor(
    conn: &mut PgConnection,
    voucher: VoucherId,
) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let row: Option<(Option<i32>, Option<i32>)> = sqlx::query_as(
        "SELECT d.entrants,
                (SELECT max(e.rank) + 1 FROM draw_entries e
                 JOIN orders o ON o.voucher_id = e.voucher_id AND o.user_id = e.user_id
                 WHERE e.voucher_id = d.voucher_id)
         FROM draws d WHERE d.voucher_id = $1 AND d.drawn_at IS NOT NULL",
    )
    .bind(voucher.get())
    .fetch_optional(conn)
    .await?;
    Ok(row.and_then(|(entrants, cursor)| {
        let entrants = i64::from(entrants?);
        Some((cursor.map_or(0, i64::from), entrants))
    }))
}

/// `user`'s latest order on `voucher`, whatever its status (a winner's order cancelled since is
/// still the one the draw gave).
pub async fn latest_order(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
) -> Result<Option<crate::domain::OrderId>, sqlx::Error> {
    let id: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM orders WHERE voucher_id = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1",
    )
    .bind(voucher.get())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    id.map(|id| crate::domain::OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e))))
        .transpose()
}

/// Draw sales whose ranking is recorded and whose sale has not ended at `now`: the ones a unit
/// coming back may still go down the ranking of.
pub async fn recorded_live(db: &PgPool, now: DateTime<Utc>) -> Result<Vec<VoucherId>, sqlx::Error> {
    let ids: Vec<i64> = sqlx::query_scalar(
        "SELECT v.id FROM draws d JOIN vouchers v ON v.id = d.voucher_id
         WHERE d.drawn_at IS NOT NULL AND v.ends_at > $1 AND d.entrants > 0
         ORDER BY v.id",
    )
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(ids.into_iter().map(VoucherId::from_db).collect())
}
